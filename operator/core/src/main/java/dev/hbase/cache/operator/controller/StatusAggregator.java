package dev.hbase.cache.operator.controller;

import static dev.hbase.cache.operator.controller.Conditions.BALANCED;
import static dev.hbase.cache.operator.controller.Conditions.CACHE_RESET_PENDING;
import static dev.hbase.cache.operator.controller.Conditions.DEGRADED;
import static dev.hbase.cache.operator.controller.Conditions.PROGRESSING;
import static dev.hbase.cache.operator.controller.Conditions.READY;
import static dev.hbase.cache.operator.controller.Conditions.VALID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.controller.Observation.Unobservable;
import dev.hbase.cache.operator.controller.PlanStep.Planned;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.Blocked;
import dev.hbase.cache.operator.roll.RollModel.Wait;
import dev.hbase.cache.operator.roll.Roller;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The status step: every condition of a reconcile is set here, from what the steps found, on a copy
 * of the previous status (lastTransitionTime moves only when a condition flips). The reconciler
 * writes the result once, and only when it differs from the previous status.
 */
final class StatusAggregator {
  /** fabric8's own serialization (its Jackson modules), as the client writes the objects. */
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private final BlockCachePolicyStatus old;
  private final BlockCachePolicyStatus status;
  private final Long generation;
  private final Instant now;
  private final Set<String> set = new HashSet<>();

  StatusAggregator(BlockCachePolicy policy, Instant now) {
    this.old = policy.getStatus();
    this.status = old == null ? new BlockCachePolicyStatus() : Serialization.clone(old);
    this.generation = policy.getMetadata().getGeneration();
    this.now = now;
    status.setObservedGeneration(generation);
  }

  /** The status being built: the roll state, the plan, the RegionServer rows and the hit ratios. */
  BlockCachePolicyStatus status() {
    return status;
  }

  RolloutStatus rollout() {
    return status.getRollout();
  }

  PlanStatus previousPlan() {
    return status.getPlan();
  }

  /** The version the policy's HMaster last reported to the operator, null if none. */
  String masterVersion() {
    return status.getMasterVersion();
  }

  /**
   * The version the policy's own HMaster reported in this reconcile (null: not asked, or not shown
   * to be the policy's: the last one stays). True when it differs from the one recorded: the master
   * keys the planner writes may differ with it ({@code plan.MasterSite}).
   */
  boolean masterSeen(String version) {
    if (version == null || version.equals(status.getMasterVersion())) {
      return false;
    }
    status.setMasterVersion(version);
    return true;
  }

  /** The running roll drops the persisted caches by design (announced by CacheResetPending). */
  boolean cacheResetPending() {
    return Conditions.isTrue(status.getConditions(), CACHE_RESET_PENDING);
  }

  // ------------------------------------------------------------------ what the steps found

  /**
   * The target could not be observed: invalid until the user fixes it, or a recreate in progress.
   */
  StatusAggregator unobservable(Unobservable u) {
    if (u.why() == Observation.Why.UntrustedBackup) {
      condition(DEGRADED, true, u.why(), u.message());
    }
    if (u.why().invalid) {
      return invalid(u.why(), u.message());
    }
    return recreating(u.message());
  }

  /** The policy cannot be applied; nothing was touched. */
  StatusAggregator invalid(Enum<?> reason, String message) {
    condition(VALID, false, reason, message);
    condition(READY, false, reason, "the policy is not applied: " + message);
    return this;
  }

  StatusAggregator planned(Planned p) {
    condition(VALID, true, Reason.Planned, p.summary());
    if (!p.cacheResets().isEmpty()) {
      condition(CACHE_RESET_PENDING, true, Reason.CacheLayoutChanged, cacheResetMessage(p));
    }
    status.setPlan(p.plan().toStatus());
    return this;
  }

  static String cacheResetMessage(Planned p) {
    return "the next restarts drop the persisted caches: " + String.join("; ", p.cacheResets());
  }

  StatusAggregator storageBlocked(String message) {
    return blocked(Reason.StorageBlocked, message);
  }

  /**
   * The roll cannot go on (the cache volume, the identity for HBase): Degraded and Ready say why,
   * the rollout is Blocked with the roll's state kept as it was.
   */
  StatusAggregator blocked(Reason reason, String message) {
    condition(DEGRADED, true, reason, message);
    condition(READY, false, reason, message);
    status.setRollout(
        Optional.ofNullable(status.getRollout())
            .orElseGet(RolloutStatus::new)
            .setPhase(Phase.Blocked)
            .setMessage(message));
    return this;
  }

  /**
   * The target exists: a recreate saved for it is done (another UID) or no longer wanted (the
   * storage step saves it again while one is wanted), unless its orphan delete is under way. One
   * saved for another StatefulSet (targetRef changed after its orphan delete) is kept, the only
   * copy of that object: returns its name, else null.
   */
  String recreateDone(io.fabric8.kubernetes.api.model.apps.StatefulSet target) {
    var saved = status.getRecreate();
    if (saved == null) {
      return null;
    }
    if (!target.getMetadata().getName().equals(saved.getStatefulSet())) {
      return saved.getStatefulSet();
    }
    // the saved object itself, its orphan delete under way (the garbage collector still holds it):
    // the status must keep it until the StatefulSet exists again
    boolean deleting =
        target.getMetadata().getUid().equals(saved.getUid())
            && target.getMetadata().getDeletionTimestamp() != null;
    if (!deleting) {
      status.setRecreate(null);
    }
    return null;
  }

  /** An object the operator would write is someone else's: Degraded names it. */
  StatusAggregator notOwned(Reason reason, String message) {
    condition(DEGRADED, true, reason, message);
    condition(READY, false, reason, message);
    return this;
  }

  /** Something is wrong that does not stop the roll: Degraded says what. */
  StatusAggregator degraded(Reason reason, String message) {
    condition(DEGRADED, true, reason, message);
    return this;
  }

  /**
   * Something is wrong that does not stop the roll, told unless this reconcile already found
   * Degraded for another reason (that one stays: it says what blocks or fails).
   */
  StatusAggregator degradedUnlessSo(Reason reason, String message) {
    boolean already = set.contains(DEGRADED) && Conditions.isTrue(status.getConditions(), DEGRADED);
    if (!already) {
      condition(DEGRADED, true, reason, message);
    }
    return this;
  }

  /** A deleted policy kept until HBase is given back: GiveBackPending says what is left. */
  StatusAggregator givingBack(String message) {
    condition(Conditions.GIVE_BACK_PENDING, true, Reason.GiveBackPending, message);
    return this;
  }

  StatusAggregator recreating(String message) {
    condition(PROGRESSING, true, Reason.RecreatingStatefulSet, message);
    return this;
  }

  /** The roller's step: its state, the restarts it completed, and the roll conditions. */
  StatusAggregator rolled(Roller.Decision d) {
    RolloutStatus r = d.state();
    status.setRollout(r);
    status.setLastCrash(d.lastCrash());
    d.restarted().forEach(this::restarted);
    status.getRegionServers().sort(Comparator.comparing(RegionServerStatus::getPod));

    boolean idle = r.getPhase() == Phase.Idle;
    Wait wait = d.outcome() instanceof Wait w ? w : null;
    if (d.outcome() instanceof Blocked b) {
      condition(DEGRADED, true, b.reason(), b.message());
    } else if (wait != null && wait.reason() == RollModel.Reason.AccessDenied) {
      // a wait that does not end by itself: the identity needs a permission granted
      condition(DEGRADED, true, wait.reason(), wait.message());
    } else {
      condition(DEGRADED, false, Reason.AsPlanned, "");
    }
    condition(
        PROGRESSING,
        r.getPhase() == Phase.Rolling,
        switch (r.getPhase()) {
          case Idle -> Reason.UpToDate;
          case Paused -> Reason.Paused;
          case Blocked -> Reason.Blocked;
          case Rolling -> wait != null ? wait.reason() : Reason.Rolling;
        },
        r.getPhase() == Phase.Rolling
            ? r.getProgress()
                + " RegionServers updated"
                + (wait != null ? "; " + wait.message() : "")
            : Objects.toString(r.getMessage(), ""));
    condition(
        READY,
        idle,
        idle ? Reason.Applied : Reason.RollPending,
        idle
            ? "all RegionServers run the planned cache"
            : r.getProgress() + " RegionServers updated");
    if (idle && Conditions.isTrue(status.getConditions(), CACHE_RESET_PENDING)) {
      condition(
          CACHE_RESET_PENDING, false, Reason.RollFinished, "the new cache layout is in place");
    }
    return this;
  }

  /**
   * Balanced: whether every Ready RegionServer serves the mean number of regions within one, from
   * the region counts of the last metrics sample ({@code regionServers[].regions}). Not judged
   * while a roll or a stop has a server in flight (a drained server holds none by design), while a
   * Ready server has no count yet (a pod just back from a scale-up: judged without it, the others'
   * counts would look even over one server too few), nor with fewer than two counted servers: the
   * condition keeps its last value.
   */
  StatusAggregator balance() {
    RolloutStatus r = status.getRollout();
    if (r != null && r.getInFlight() != null && !r.getInFlight().isEmpty()) {
      return this;
    }
    List<RegionServerStatus> ready =
        status.getRegionServers().stream().filter(x -> Boolean.TRUE.equals(x.getReady())).toList();
    List<RegionServerStatus> counted = ready.stream().filter(x -> x.getRegions() != null).toList();
    if (counted.size() < 2 || counted.size() < ready.size()) {
      return this;
    }
    double mean = counted.stream().mapToInt(RegionServerStatus::getRegions).average().orElse(0);
    List<RegionServerStatus> off =
        counted.stream().filter(x -> Math.abs(x.getRegions() - mean) > 1.0).toList();
    String counts =
        counted.stream()
            .map(x -> x.getPod() + " " + x.getRegions())
            .collect(java.util.stream.Collectors.joining(", "));
    String what =
        String.format(java.util.Locale.ROOT, "regions per server: %s (mean %.1f)", counts, mean);
    if (off.isEmpty()) {
      condition(BALANCED, true, Reason.RegionsEven, what + ", each within one of it");
    } else {
      condition(
          BALANCED,
          false,
          Reason.RegionsSkewed,
          what
              + "; more than one off: "
              + off.stream()
                  .map(RegionServerStatus::getPod)
                  .collect(java.util.stream.Collectors.joining(", ")));
    }
    return this;
  }

  /** The roll holds while the policy cannot be applied ({@link Roller#hold}). */
  StatusAggregator held(Roller.Decision d) {
    status.setRollout(d.state());
    if (d.outcome() instanceof Blocked b) {
      condition(DEGRADED, true, b.reason(), b.message());
    }
    return this;
  }

  /** A reconcile failed with an exception (an API or HBase call): say so until one succeeds. */
  StatusAggregator failed(Exception e) {
    String message = Objects.toString(e.getMessage(), e.getClass().getSimpleName());
    message = message.length() > 500 ? message.substring(0, 500) + "..." : message;
    condition(READY, false, Reason.ReconcileError, message);
    condition(DEGRADED, true, Reason.ReconcileError, message);
    return this;
  }

  /** The status to write, or null when it equals the previous one. */
  BlockCachePolicyStatus changed() {
    if (!set.contains(DEGRADED)
        && Conditions.find(status.getConditions(), DEGRADED)
            .map(c -> Reason.ReconcileError.name().equals(c.getReason()))
            .orElse(false)) {
      condition(DEGRADED, false, Reason.Recovered, "the last reconcile succeeded");
    }
    return Objects.equals(old, status) ? null : status;
  }

  /**
   * Whether what differs from the previous status is only what every reconcile works out afresh
   * from what it sees: the messages, a condition's reason while its status stays, the RegionServer
   * rows and the cache figures. The roll's state, the plan, a condition turning, the roll's read
   * counters (they add up across reconciles) and the sizing advice are not: a status that differs
   * in any of them must be written at once ({@link StatusWrites}).
   */
  boolean onlyProgressChanged() {
    return old != null && withoutProgress(old).equals(withoutProgress(status));
  }

  private static JsonNode withoutProgress(BlockCachePolicyStatus s) {
    ObjectNode n = SERIALIZATION.convertValue(s, ObjectNode.class);
    n.remove(List.of("regionServers", "cache"));
    if (n.get("rollout") instanceof ObjectNode r) {
      r.remove("message");
    }
    if (n.get("conditions") != null) {
      n.get("conditions").forEach(c -> ((ObjectNode) c).remove(List.of("message", "reason")));
    }
    return n;
  }

  // ------------------------------------------------------------------ helpers

  private void restarted(RollModel.Restarted r) {
    RegionServerStatus rs =
        status.getRegionServers().stream()
            .filter(x -> r.pod().equals(x.getPod()))
            .findFirst()
            .orElseGet(
                () -> {
                  RegionServerStatus n = new RegionServerStatus().setPod(r.pod());
                  status.getRegionServers().add(n);
                  return n;
                });
    rs.setRestartedAt(r.readyAt().toString());
    rs.setRetainedFraction(
        r.retainedFraction() == null ? null : Math.round(r.retainedFraction() * 10000) / 10000.0);
  }

  private void condition(String type, boolean value, Enum<?> reason, String message) {
    set.add(type);
    Conditions.set(status.getConditions(), type, value, reason, message, generation, now);
  }
}
