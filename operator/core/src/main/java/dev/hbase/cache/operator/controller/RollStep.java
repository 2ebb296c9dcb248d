package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.spec.WarmGate;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.connection.HBaseClusters;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.controller.PlanStep.Planned;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ExpireResult;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.hbase.RecommissionResult;
import dev.hbase.cache.operator.metrics.InfoServers;
import dev.hbase.cache.operator.metrics.MetricsCollector;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.plan.MasterSite;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.roll.Owed;
import dev.hbase.cache.operator.roll.OwnCluster;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Roller;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The roll step: one {@link Roller} step on what the pods and HBase show now, and the actions it
 * asks for, carried out in order. HBase is asked only when the roller needs it. Every call here
 * returns at once; the roller owns every wait (it looks again after its requeue delay).
 *
 * <p>Over ~400 lines (about 470): the step and its hold share how each action kind is carried out,
 * fenced by the leader lease and refused when decided too long ago ({@code executeAll}); that part
 * is the next to move out if it grows (the release on a deleted policy went to {@link
 * ReleaseStep}).
 */
final class RollStep {
  private static final Logger log = LoggerFactory.getLogger(RollStep.class);

  private final HBaseClusters clusters;
  private final MetricsCollector metrics;
  private final Events events;
  private final BooleanSupplier leading;
  private final LongSupplier nanoTime;
  private final String clusterDomain;
  private final StopDeadlines deadlines;

  /**
   * How long after a decision its actions go on being sent: the first always goes, one that would
   * start later is not sent (the rest is decided again in the next reconcile, on a fresh view, and
   * an ActionFailed event says so). Every HBase call has its own bound (seconds; a drain or a
   * reload reads the cluster again inside); this one bounds a step's actions together, so that a
   * slow master holds a reconcile thread, shared by every policy, for about a minute more at most.
   */
  static final Duration FRESH = Duration.ofSeconds(60);

  RollStep(
      HBaseClusters clusters, MetricsCollector metrics, Events events, BooleanSupplier leading) {
    this(clusters, metrics, events, leading, System::nanoTime);
  }

  RollStep(
      HBaseClusters clusters,
      MetricsCollector metrics,
      Events events,
      BooleanSupplier leading,
      LongSupplier nanoTime) {
    this(
        clusters,
        metrics,
        events,
        leading,
        nanoTime,
        BlockCachePolicyReconciler.DEFAULT_CLUSTER_DOMAIN);
  }

  /**
   * @param leading whether this operator holds its leader lease now (always, without leader
   *     election): an operator that lost it sends no action more, not even one its last reconcile
   *     decided, while it exits; the new leader decides afresh from the status
   * @param nanoTime the clock of {@link #FRESH} ({@code System::nanoTime})
   * @param clusterDomain the cluster's DNS domain: a RegionServer is a pod of the policy's
   *     namespace by its name there ({@link Zone})
   */
  RollStep(
      HBaseClusters clusters,
      MetricsCollector metrics,
      Events events,
      BooleanSupplier leading,
      LongSupplier nanoTime,
      String clusterDomain) {
    this.clusters = clusters;
    this.metrics = metrics;
    this.events = events;
    this.leading = leading;
    this.nanoTime = nanoTime;
    this.clusterDomain = clusterDomain;
    this.deadlines = new StopDeadlines(events, leading);
  }

  /** The policy's namespace in DNS. */
  Zone zone(BlockCachePolicy policy) {
    return new Zone(policy.getMetadata().getNamespace(), clusterDomain);
  }

  /**
   * What {@link #roll} did: the roller's decision with its actions carried out, or none when an
   * action failed (the previous roll state stays and the step is taken again: the roller is
   * idempotent); {@code refused} is HBase's refusal when that is why (the policy's identity lacks a
   * permission: a Degraded reason, since the step fails again until one is granted), else null;
   * {@code releaseIn} when a stopping pod's RegionServer is next due to be stopped through HBase
   * ({@link StopDeadlines}), null if none is; {@code wrongLine} when the HMaster's line cannot run
   * the plan ({@code HBaseLine.unsafe}): no step was taken, the decision is the hold's if the roll
   * had changed HBase; {@code masterVersion} the version the policy's own HMaster reported in this
   * step ({@link OwnCluster#masterVersion}), null if it was not asked or not shown to be the
   * policy's: for {@code status.masterVersion}.
   */
  record Rolled(
      Optional<Roller.Decision> decision,
      String refused,
      Duration releaseIn,
      String wrongLine,
      String masterVersion) {}

  /** The roller's decision with its actions carried out ({@link Rolled}). */
  Rolled roll(
      PolicyContext c,
      Observed o,
      Planned p,
      RolloutStatus previous,
      boolean cacheReset,
      KerberosLogin login,
      InfoServers info) {
    KubernetesClient client = c.client();
    Instant now = c.now();
    BlockCachePolicy policy = o.policy();
    // a status that lost balancerWasOn mid-roll: the target's record still has it
    previous = BalancerRecord.recovered(previous, o.target(), policy);
    var lastCrash = policy.getStatus() == null ? null : policy.getStatus().getLastCrash();
    List<PodView> pods =
        java.util.stream.Stream.concat(o.pods().stream(), o.leaving().stream()).toList();
    boolean rolling =
        Roller.needsHBase(previous, lastCrash, pods, p.revision(), now)
            || pods.stream()
                .anyMatch(
                    v ->
                        c.cachedPod(new ResourceID(v.name(), policy.getMetadata().getNamespace()))
                            .map(StopDeadlines::stoppedByKubelet)
                            .orElse(false));
    boolean ask =
        rolling
            // a mark recorded beside the status: the master shows whether it is still there
            || !BalancerRecord.recordedMarks(o.target(), policy).isEmpty()
            // a server last seen decommissioned: the figure the alerts read stays fresh
            || Owed.looking(previous);
    log.debug(
        "policy {}/{}: HBase asked {} (rolling {})",
        policy.getMetadata().getNamespace(),
        policy.getMetadata().getName(),
        ask,
        rolling);
    ClusterSnapshot hbase =
        ask
            ? snapshot(o, now, login)
            : ClusterSnapshot.unreachable(now, "not asked: nothing to roll");
    String masterVersion = OwnCluster.masterVersion(hbase, pods, zone(policy));
    if (!ask && MasterSite.awaitsMaster(policy.getSpec(), recordedVersion(policy))) {
      // the master keys wait for the master's version: a look for it alone (nothing is sent, and
      // the roller decides on an idle cluster as it would unasked)
      masterVersion = OwnCluster.masterVersion(snapshot(o, now, login), pods, zone(policy));
    }
    Optional<String> wrongLine =
        hbase.masterReachable() && !OwnCluster.foreign(hbase, pods, zone(policy))
            ? dev.hbase.cache.operator.plan.HBaseLine.unsafe(
                policy.getSpec(), hbase.masterVersion())
            : Optional.empty();
    if (wrongLine.isPresent()) {
      // a plan the master's line cannot run: no pod restarts onto it, and HBase is given back; a
      // pod stopped with a short deadline still has its RegionServer stopped through HBase first
      events.warn(client, policy, Reason.HBaseVersionMismatch, wrongLine.get());
      return new Rolled(
          hold(c, o.base(), pods, previous, Reason.HBaseVersionMismatch, login),
          null,
          release(c, o, p, pods, hbase, login, now),
          wrongLine.get(),
          masterVersion);
    }
    checkLine(client, policy, hbase);
    // fresh cache samples only for a roll or a stop (a look at the marks needs the master alone)
    Map<String, CacheView> caches =
        rolling ? metrics.probeNow(info, serving(o, hbase, previous)) : Map.of();
    Roller.Decision d =
        Roller.step(
            previous,
            new RollModel.Input(
                settings(policy.getSpec(), p.plan(), p.revision(), cacheReset),
                o.pods(),
                hbase,
                caches,
                now,
                o.replicas(),
                o.leaving(),
                zone(policy),
                lastCrash,
                // a mark the status lost mid-drain: given back as the roll goes on
                BalancerRecord.recordedMarks(o.target(), policy)));
    List<RollModel.Action> actions = d.actions();
    if (log.isDebugEnabled()) {
      log.debug(
          "policy {}/{}: step on HBase {} (live {}); terminations {}; actions {}",
          policy.getMetadata().getNamespace(),
          policy.getMetadata().getName(),
          hbase.masterReachable() ? "read" : "unread: " + hbase.error(),
          hbase.live().stream().map(s -> s.id().toString()).toList(),
          o.pods().stream()
              .filter(v -> v.lastTermination() != null)
              .map(v -> v.name() + " " + v.lastTermination())
              .toList(),
          actions);
    }
    BalancerRecord.sync(events, client, policy, o.target(), d.state(), true);
    BalancerRecord.syncMarks(client, policy, o.target(), d.state(), hbase, true);
    java.util.concurrent.atomic.AtomicReference<String> refused =
        new java.util.concurrent.atomic.AtomicReference<>();
    if (!executeAll(
        client,
        policy,
        c::cachedPod,
        cluster(o, login),
        actions,
        nanoTime.getAsLong(),
        refused::set)) {
      return new Rolled(Optional.empty(), refused.get(), null, null, masterVersion);
    }
    BalancerRecord.sync(events, client, policy, o.target(), d.state(), false);
    seen(client, policy, o.target(), d, hbase, pods);
    d.state().setCacheVolumesWhenScaled(whenScaled(o.target()));
    d.events().forEach(e -> events.record(client, policy, e));
    return new Rolled(
        Optional.of(d), null, release(c, o, p, pods, hbase, login, now), null, masterVersion);
  }

  /**
   * The RegionServers of pods stopped with a short deadline, stopped through HBase when theirs has
   * come ({@link StopDeadlines}): when to look again, null if none is pending or the master is not
   * reachable.
   */
  private Duration release(
      PolicyContext c,
      Observed o,
      Planned p,
      List<PodView> pods,
      ClusterSnapshot hbase,
      KerberosLogin login,
      Instant now) {
    BlockCachePolicy policy = o.policy();
    return !hbase.masterReachable()
        ? null
        : deadlines.release(
            c.client(),
            policy,
            pods,
            name -> c.cachedPod(new ResourceID(name, policy.getMetadata().getNamespace())),
            o.container().getName(),
            hbase,
            () -> cluster(o, login),
            Duration.ofSeconds(p.plan().terminationGracePeriodSeconds()),
            now);
  }

  private static String recordedVersion(BlockCachePolicy policy) {
    return policy.getStatus() == null ? null : policy.getStatus().getMasterVersion();
  }

  /**
   * A Warning event when the HMaster reports a release of another HBase line than the policy is
   * planned for ({@code HBaseLine.mismatch}): the planner cannot see the master (it runs before
   * HBase is reachable, and its plan must not change with what the master answered last), so this
   * is where a wrong spec.hbase.version shows. The same event counts up while it lasts.
   */
  void checkLine(KubernetesClient client, BlockCachePolicy policy, ClusterSnapshot hbase) {
    if (policy.getSpec() == null || !hbase.masterReachable()) {
      return;
    }
    dev.hbase.cache.operator.plan.HBaseLine.mismatch(policy.getSpec(), hbase.masterVersion())
        .ifPresent(m -> events.warn(client, policy, Reason.HBaseVersionMismatch, m));
  }

  /** The StatefulSet's persistentVolumeClaimRetentionPolicy.whenScaled (Retain when unset). */
  static String whenScaled(io.fabric8.kubernetes.api.model.apps.StatefulSet sts) {
    var p = sts.getSpec().getPersistentVolumeClaimRetentionPolicy();
    return p == null || p.getWhenScaled() == null ? "Retain" : p.getWhenScaled();
  }

  /**
   * Carries out the actions in order while the decision is fresh ({@link #FRESH} since {@code
   * since}, a {@code nanoTime} reading taken when it was made); false at the first that fails or
   * would start too late.
   */
  boolean executeAll(
      KubernetesClient client,
      BlockCachePolicy policy,
      Function<ResourceID, Optional<Pod>> cachedPod,
      HBaseCluster cluster,
      List<RollModel.Action> actions,
      long since) {
    return executeAll(client, policy, cachedPod, cluster, actions, since, x -> {});
  }

  /**
   * Same; {@code refused} is told HBase's refusal when an action failed for want of a permission.
   */
  boolean executeAll(
      KubernetesClient client,
      BlockCachePolicy policy,
      Function<ResourceID, Optional<Pod>> cachedPod,
      HBaseCluster cluster,
      List<RollModel.Action> actions,
      long since,
      Consumer<String> refused) {
    for (int i = 0; i < actions.size(); i++) {
      RollModel.Action a = actions.get(i);
      Duration age = i == 0 ? Duration.ZERO : Duration.ofNanos(nanoTime.getAsLong() - since);
      if (age.compareTo(FRESH) > 0 && leading.getAsBoolean()) { // else execute refuses, silently
        log.warn(
            "policy {}/{}: {} and what follows not sent: decided {} s ago",
            policy.getMetadata().getNamespace(),
            policy.getMetadata().getName(),
            a,
            age.toSeconds());
        // one message for every such case: the same event counts up instead of a new one each
        events.warn(
            client,
            policy,
            Reason.ActionFailed,
            "a roll step's actions not all sent: decided more than "
                + FRESH.toSeconds()
                + " s before (HBase answered slowly); the rest decided again in the next reconcile");
        return false;
      }
      if (!execute(client, policy, cachedPod, cluster, a, refused)) {
        return false;
      }
    }
    return true;
  }

  /**
   * A roll under way whose policy can no longer be applied: {@link Roller#hold} with its actions
   * carried out (the balancer as before the roll, drained servers recommissioned). Empty when no
   * roll left the cluster changed, or when an action failed (then the same again next time).
   */
  Optional<Roller.Decision> hold(
      PolicyContext c,
      ConfigMap base,
      List<PodView> pods,
      RolloutStatus previous,
      Enum<?> why,
      KerberosLogin login) {
    KubernetesClient client = c.client();
    BlockCachePolicy policy = c.policy();
    Instant now = c.now();
    if (!Roller.needsHold(previous)) {
      return Optional.empty();
    }
    HBaseCluster cluster = clusters.of(policy, base, login);
    ClusterSnapshot hbase;
    try {
      hbase = cluster.snapshot();
    } catch (RuntimeException e) {
      hbase = ClusterSnapshot.unreachable(now, e.getMessage());
    }
    StatefulSet target = c.target().orElse(null);
    Roller.Decision d =
        Roller.hold(
            previous,
            pods,
            hbase,
            why.name(),
            zone(policy),
            BalancerRecord.recordedMarks(target, policy));
    if (!executeAll(client, policy, c::cachedPod, cluster, d.actions(), nanoTime.getAsLong())) {
      return Optional.empty();
    }
    seen(client, policy, target, d, hbase, pods);
    d.events().forEach(e -> events.record(client, policy, e));
    return Optional.of(d);
  }

  /**
   * After a step's actions were all sent: the second record of the marks as they now stand (a
   * server the step recommissioned leaves it at once, so a later mark of an administrator's on that
   * instance is not taken for the roll's), and HBase as the operator now knows it ({@code
   * status.rollout.cluster}), only for a cluster shown to be the policy's: a refused step keeps
   * what it knew, and another cluster's state never reaches this policy's status. {@code target}
   * and {@code pods} may be null (a hold while the target cannot be observed).
   */
  private void seen(
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet target,
      Roller.Decision d,
      ClusterSnapshot hbase,
      List<PodView> pods) {
    if (!hbase.masterReachable()
        || OwnCluster.refusal(hbase, pods == null ? List.of() : pods, zone(policy)) != null) {
      return;
    }
    if (target != null) {
      BalancerRecord.syncMarks(
          client,
          policy,
          target,
          d.state(),
          hbase.withDecommissioned(Owed.marksAfter(hbase, d.actions())),
          false);
    }
    d.state().setCluster(Owed.after(d.state().getCluster(), hbase, d.actions(), pods));
  }

  /**
   * The pods whose /jmx the roller needs: Ready ones, unready ones whose RegionServer still serves
   * regions (they are drained like the others), and a restarted one at the warm gate, whose new
   * RegionServer has registered (its info server is up: it starts before the registration), before
   * its readiness probe or its next load report says so (a probe every 10 s, common in charts, held
   * the gate up to that long). A pod still starting is not asked: its /jmx may hang up to the
   * scrape timeout and hold the reconcile.
   */
  static List<PodView> serving(Observed o, ClusterSnapshot hbase, RolloutStatus previous) {
    java.util.Set<String> registered =
        previous == null || previous.getInFlight() == null
            ? java.util.Set.of()
            : previous.getInFlight().stream()
                .filter(
                    r ->
                        r.getStep() == dev.hbase.cache.api.v1alpha1.status.PodRoll.Step.WarmGate
                            && r.getNewServer() != null)
                .map(r -> r.getPod())
                .collect(java.util.stream.Collectors.toSet());
    return java.util.stream.Stream.concat(o.pods().stream(), o.leaving().stream())
        .filter(
            pod ->
                pod.ready()
                    || registered.contains(pod.name())
                    || RollModel.serverFor(hbase, pod).map(x -> x.regionCount() > 0).orElse(false))
        .toList();
  }

  static RollModel.Settings settings(
      BlockCachePolicySpec spec, Plan plan, String revision, boolean cacheReset) {
    RolloutSpec r = spec.getRollout() == null ? new RolloutSpec() : spec.getRollout();
    WarmGate w = r.warmGateOrDefault();
    return new RollModel.Settings(
        revision,
        r.strategyOrDefault(),
        r.maxUnavailableOrDefault(),
        Boolean.TRUE.equals(r.getPaused()),
        Durations.parse(r.podReadyTimeoutOrDefault(), RolloutSpec.DEFAULT_POD_READY_TIMEOUT),
        w.getMinRetainedFraction(),
        w.getMinHitRatio(),
        Durations.parse(w.timeoutOrDefault(), WarmGate.DEFAULT_TIMEOUT),
        plan.persistentPath() != null,
        cacheReset,
        plan.bucketCache());
  }

  private ClusterSnapshot snapshot(Observed o, Instant now, KerberosLogin login) {
    try {
      return cluster(o, login).snapshot();
    } catch (RuntimeException e) {
      return ClusterSnapshot.unreachable(now, e.getMessage());
    }
  }

  private HBaseCluster cluster(Observed o, KerberosLogin login) {
    return clusters.of(o.policy(), o.base(), login);
  }

  /**
   * Carries out one action; false if it failed (an ActionFailed event says why; an AccessDenied one
   * when HBase refused it for want of a permission, and {@code refused} is told its message) or
   * this operator no longer leads (then nothing is sent, not even the event).
   *
   * @param cachedPod a pod as the operator's informer has it (the one the roller decided on)
   */
  boolean execute(
      KubernetesClient client,
      BlockCachePolicy policy,
      Function<ResourceID, Optional<Pod>> cachedPod,
      HBaseCluster cluster,
      RollModel.Action a,
      Consumer<String> refused) {
    String ns = policy.getMetadata().getNamespace();
    if (!leading.getAsBoolean()) {
      log.warn(
          "policy {}/{}: {} not carried out: this operator no longer leads",
          ns,
          policy.getMetadata().getName(),
          a);
      return false;
    }
    try {
      if (a instanceof RollModel.DeletePod d) {
        // Only the instance the roll decided on: the pod the informer showed it (same UID), and
        // the delete is conditional on that resourceVersion, so neither a successor with the
        // same name nor a pod changed since is deleted (409: the next reconcile, triggered by
        // the change, decides again). No GET first: one request fewer per restart.
        Pod seen = cachedPod.apply(new ResourceID(d.pod(), ns)).orElse(null);
        if (seen != null
            && d.uid().equals(seen.getMetadata().getUid())
            && seen.getMetadata().getDeletionTimestamp() == null) {
          client
              .pods()
              .inNamespace(ns)
              .withName(d.pod())
              .lockResourceVersion(seen.getMetadata().getResourceVersion())
              .delete();
        }
      } else if (a instanceof RollModel.ExpireServer x) {
        // checked again on the master and at the instance's endpoint: a live one is refused, the
        // roll goes on, and its ZooKeeper session decides
        ExpireResult r = cluster.expire(x.server());
        log.info("policy {}/{}: {} ({})", ns, policy.getMetadata().getName(), r, x.pod());
        if (r.refused()) {
          events.warn(client, policy, Reason.ExpiryRefused, x.pod() + ": " + r);
        }
        return true;
      } else if (a instanceof RollModel.SwitchBalancer b) {
        cluster.balancer(b.on());
      } else if (a instanceof RollModel.Drain d) {
        cluster.drain(d.server(), d.targets());
      } else if (a instanceof RollModel.Recommission r) {
        RecommissionResult result = cluster.recommission(r.oldServer(), r.regions());
        log.info("policy {}/{}: {}", ns, policy.getMetadata().getName(), result);
        return true;
      }
      log.info("policy {}/{}: {}", ns, policy.getMetadata().getName(), a);
      return true;
    } catch (Exception e) {
      if (a instanceof RollModel.DeletePod
          && e instanceof KubernetesClientException k
          && k.getCode() == 409) {
        return false; // the pod changed since it was read: decide again with fresh state
      }
      log.warn("policy {}/{}: {} failed: {}", ns, policy.getMetadata().getName(), a, e.toString());
      if (accessDenied(e)) {
        String message =
            a
                + " refused by HBase: the policy's identity needs READ and ADMIN ('RA'): "
                + e.getMessage();
        events.warn(client, policy, Reason.AccessDenied, message);
        refused.accept(message);
      } else {
        events.warn(client, policy, Reason.ActionFailed, a + " failed: " + e.getMessage());
      }
      return false;
    }
  }

  /** Whether the failure, or one of its causes, is HBase refusing the identity a permission. */
  static boolean accessDenied(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof HBaseClusterException.AccessDenied) {
        return true;
      }
    }
    return false;
  }
}
