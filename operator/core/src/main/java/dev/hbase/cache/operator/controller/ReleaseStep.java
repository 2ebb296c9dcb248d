package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.connection.HBaseClusters;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.roll.OwnCluster;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Roller;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cleanup's HBase side: a policy deleted mid-roll gives HBase back as a roll would leave it
 * ({@link Roller#release}), to its own cluster only.
 */
final class ReleaseStep {
  private static final Logger log = LoggerFactory.getLogger(ReleaseStep.class);

  /** How soon a give-back that did not succeed is tried again, the finalizer kept meanwhile. */
  static final Duration PENDING_RETRY = Duration.ofSeconds(30);

  /**
   * Set to {@code "true"} on a deleted policy whose give-back cannot succeed (its HBase gone for
   * good): the finalizer goes at once, a Warning event saying what HBase was left with. As
   * CloudNativePG and Strimzi leave a stuck finalizer to the user, never to a timeout.
   */
  static final String ABANDON_ANNOTATION = "cache.hbase.dev/abandon-give-back";

  private final HBaseClusters clusters;
  private final Events events;
  private final String clusterDomain;

  /**
   * When each deleted policy's give-back was last tried, by uid: at most one try per {@link
   * #PENDING_RETRY} ({@link #untilNextTry}). Holds only policies being deleted that still owe
   * HBase; an entry goes when its give-back succeeds, or when it is ten retries old (a policy whose
   * finalizer someone else removed is never tried again).
   */
  private final Map<String, Instant> tried = new ConcurrentHashMap<>();

  /**
   * @param clusterDomain the cluster's DNS domain: a RegionServer is a pod of the policy's
   *     namespace by its name there ({@link Zone})
   */
  ReleaseStep(HBaseClusters clusters, Events events, String clusterDomain) {
    this.clusters = clusters;
    this.events = events;
    this.clusterDomain = clusterDomain;
  }

  /**
   * How long until this deleted policy's give-back may be tried again, or null for now. Every
   * update of a deleting policy and every event of its pods runs the cleanup (PolicyChanges accepts
   * them all), and each try costs two snapshots of the master and a Warning event: tries are at
   * least {@link #PENDING_RETRY} apart, per policy. The abandon annotation acts at once.
   */
  Duration untilNextTry(PolicyContext c) {
    Instant now = c.now();
    tried.values().removeIf(at -> at.isBefore(now.minus(PENDING_RETRY.multipliedBy(10))));
    Instant last = tried.get(uid(c.policy()));
    if (last == null || abandoned(c.policy())) {
      return null;
    }
    Duration left = Duration.between(now, last.plus(PENDING_RETRY));
    return left.isNegative() || left.isZero() ? null : left;
  }

  /** A try of this policy's give-back starts now (whatever its outcome): the next waits. */
  void trying(PolicyContext c) {
    tried.put(uid(c.policy()), c.now());
  }

  private static String uid(BlockCachePolicy policy) {
    return policy.getMetadata().getUid();
  }

  /**
   * The policy is deleted mid-roll: HBase is left as a roll would leave it, balancer restored and
   * decommission marks cleared, once the cluster is shown to be the policy's ({@link OwnCluster}:
   * nothing is sent otherwise). Not fenced by the leader lease: it only gives back, and a policy
   * whose finalizer goes is never seen by the next leader. Each step on its own; then the master is
   * asked again whether the balancer is as the roll found it and no live server of the roll still
   * marked: a mark on an instance that is gone does not count (its pod restarts under a new start
   * code, unmarked).
   *
   * @return its left null once HBase is given back (or was never changed), else what is left and
   *     why: the cleanup then keeps the finalizer and tries again ({@link #PENDING_RETRY}), the
   *     status being the record of what is owed for as long as the policy is there
   */
  Given release(PolicyContext c, KerberosLogin login) {
    BlockCachePolicy policy = c.policy();
    if (!needsRelease(c)) {
      BalancerRecord.forget(c);
      return Given.DONE;
    }
    RolloutStatus r = owed(c);
    ConfigMap base = c.configMap(policy.getSpec().getHbaseSiteConfigMap()).orElse(null);
    List<RollModel.Action> release = Roller.release(r, recordedMarks(c));
    if (release.isEmpty()) {
      return Given.DONE;
    }
    trying(c);
    ClusterSnapshot hbase = snapshot(policy, base, login, c);
    Zone zone = new Zone(c.namespace(), clusterDomain);
    List<PodView> pods = Observer.targetPods(c, zone);
    String notOwn = OwnCluster.refusal(hbase, pods, zone);
    if (notOwn != null) {
      return new Given("HBase not given back (" + release + "): " + notOwn, false);
    }
    for (RollModel.Action a : release) {
      bestEffort(
          policy,
          a.toString(),
          () -> {
            HBaseCluster cluster = clusters.of(policy, base, login);
            if (a instanceof RollModel.SwitchBalancer b) {
              return cluster.balancer(b.on());
            } else if (a instanceof RollModel.Recommission m) {
              return cluster.recommission(m.oldServer(), m.regions());
            }
            throw new IllegalStateException("not a release action: " + a);
          });
    }
    ClusterSnapshot after = snapshot(policy, base, login, c);
    String left = left(release, after);
    if (left == null) {
      tried.remove(uid(policy));
      BalancerRecord.forget(c);
    }
    return new Given(left, balancerBack(release, after));
  }

  /**
   * What a give-back left ({@code left}: null once HBase is given back), and whether the master
   * shows the balancer on as the roll found it: then the cleanup drops {@code balancerWasOn} from
   * the record, so that a later try (for a server still marked) does not switch it on again over an
   * administrator who turned it off since.
   */
  record Given(String left, boolean balancerBack) {
    static final Given DONE = new Given(null, false);
  }

  /** The give-back switched the balancer on and the master shows it on. */
  static boolean balancerBack(List<RollModel.Action> release, ClusterSnapshot after) {
    return after.masterReachable()
        && Boolean.TRUE.equals(after.balancerOn())
        && release.contains(new RollModel.SwitchBalancer(true));
  }

  /**
   * What of {@code release} the master does not show done, or null: the balancer on where the roll
   * found it on, and no live server still marked decommissioned among those the roll marked.
   */
  static String left(List<RollModel.Action> release, ClusterSnapshot after) {
    if (!after.masterReachable()) {
      return "the HBase master did not answer after the give-back";
    }
    List<String> left = new ArrayList<>();
    for (RollModel.Action a : release) {
      if (a instanceof RollModel.SwitchBalancer b
          && b.on()
          && !Boolean.TRUE.equals(after.balancerOn())) {
        left.add("the balancer is still off");
      } else if (a instanceof RollModel.Recommission m
          && after.decommissioned().contains(m.oldServer())
          && after.live().stream().anyMatch(s -> s.id().equals(m.oldServer()))) {
        left.add(m.oldServer() + " is still decommissioned");
      }
    }
    return left.isEmpty() ? null : String.join(", ", left);
  }

  private ClusterSnapshot snapshot(
      BlockCachePolicy policy, ConfigMap base, KerberosLogin login, PolicyContext c) {
    try {
      return clusters.of(policy, base, login).snapshot();
    } catch (RuntimeException e) {
      return ClusterSnapshot.unreachable(c.now(), e.getMessage());
    }
  }

  /**
   * A deleted policy's give-back did not succeed ({@code left}, from {@link #release}): whether its
   * finalizer may go all the same, each way told by a Warning event. It goes when the author let it
   * go ({@link #ABANDON_ANNOTATION}), or when the policy's namespace no longer holds the cluster:
   * its target StatefulSet and its base hbase-site ConfigMap both gone (a namespace deleted, a
   * whole release uninstalled), as the servers the roll marked went with their pods and nothing
   * names the master any more. Otherwise it stays, and the event says how to let it go.
   */
  boolean letGo(PolicyContext c, String left) {
    BlockCachePolicy policy = c.policy();
    String name = policy.getMetadata().getName();
    if (abandoned(policy)) {
      events.warn(
          c.client(),
          policy,
          Reason.GiveBackAbandoned,
          "deleted with " + ABANDON_ANNOTATION + "=true: HBase left as it is: " + left);
      return true;
    }
    if (c.target().isEmpty()
        && c.configMap(policy.getSpec().getHbaseSiteConfigMap()).isEmpty()
        && Observer.targetPods(c, new Zone(c.namespace(), clusterDomain)).isEmpty()) {
      events.warn(
          c.client(),
          policy,
          Reason.GiveBackAbandoned,
          "deleted with its StatefulSet and base hbase-site ConfigMap gone, so no cluster is left to"
              + " give back to: HBase left as it is: "
              + left);
      return true;
    }
    log.warn(
        "policy {}/{} deleted mid-roll, HBase not given back yet: {}", c.namespace(), name, left);
    events.warn(
        c.client(),
        policy,
        Reason.GiveBackPending,
        "deleted mid-roll, HBase not given back yet: "
            + left.substring(0, Math.min(left.length(), 300))
            + ". The policy stays until it is (tried again every "
            + PENDING_RETRY.toSeconds()
            + " s); to let it go as it is: kubectl annotate bcp "
            + name
            + " -n "
            + c.namespace()
            + " "
            + ABANDON_ANNOTATION
            + "=true");
    return false;
  }

  /** Whether the policy's author let its give-back go ({@link #ABANDON_ANNOTATION}). */
  static boolean abandoned(BlockCachePolicy policy) {
    var a = policy.getMetadata().getAnnotations();
    return a != null && "true".equalsIgnoreCase(a.get(ABANDON_ANNOTATION));
  }

  /**
   * Whether a deleted policy left HBase changed: the balancer off, a server drained. The same test
   * as the give-back's own ({@link Roller#release}): a pod restarting without a drain owes HBase
   * nothing, so its policy neither needs an identity nor waits for one.
   */
  static boolean needsRelease(PolicyContext c) {
    return !Roller.release(owed(c), recordedMarks(c)).isEmpty();
  }

  /**
   * What the deleted policy's roll owes, as its status says, completed by the target's record of
   * the balancer when the status lost it ({@link BalancerRecord}).
   */
  static RolloutStatus owed(PolicyContext c) {
    BlockCachePolicy policy = c.policy();
    RolloutStatus r = policy.getStatus() == null ? null : policy.getStatus().getRollout();
    return BalancerRecord.recovered(r, c.target().orElse(null), policy);
  }

  /** The servers the target's record holds marked for this policy ({@link BalancerRecord}). */
  static List<String> recordedMarks(PolicyContext c) {
    return BalancerRecord.recordedMarks(c.target().orElse(null), c.policy());
  }

  private interface HBaseCall {
    Object call() throws Exception;
  }

  private static void bestEffort(BlockCachePolicy policy, String what, HBaseCall call) {
    try {
      call.call();
    } catch (Exception e) {
      log.warn(
          "policy {} deleted mid-roll: could not {}: {}",
          policy.getMetadata().getName(),
          what,
          e.toString());
    }
  }
}
