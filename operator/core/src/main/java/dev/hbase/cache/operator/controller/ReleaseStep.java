package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.connection.HBaseClusters;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.roll.OwnCluster;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.Roller;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cleanup's HBase side: a policy deleted mid-roll gives HBase back as a roll would leave it
 * ({@link Roller#release}), to its own cluster only.
 */
final class ReleaseStep {
  private static final Logger log = LoggerFactory.getLogger(ReleaseStep.class);

  private final HBaseClusters clusters;
  private final Events events;
  private final String clusterDomain;

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
   * The policy is deleted mid-roll: HBase is left as a roll would leave it, balancer restored and
   * decommission marks cleared, once the cluster is shown to be the policy's ({@link OwnCluster}: a
   * Warning event and nothing sent otherwise). Not fenced by the leader lease: it only gives back,
   * and a policy whose finalizer goes is never seen by the next leader. Each step on its own, a
   * failure logged: the balancer matters most, and a mark that cannot be cleared belongs to an
   * instance that is gone (its pod restarts under a new start code, unmarked).
   */
  void release(PolicyContext c, KerberosLogin login) {
    BlockCachePolicy policy = c.policy();
    if (!needsRelease(policy)) {
      return;
    }
    RolloutStatus r = policy.getStatus().getRollout();
    ConfigMap base = c.configMap(policy.getSpec().getHbaseSiteConfigMap()).orElse(null);
    List<RollModel.Action> release = Roller.release(r);
    if (release.isEmpty()) {
      return;
    }
    ClusterSnapshot hbase;
    try {
      hbase = clusters.of(policy, base, login).snapshot();
    } catch (RuntimeException e) {
      hbase = ClusterSnapshot.unreachable(c.now(), e.getMessage());
    }
    Zone zone = new Zone(c.namespace(), clusterDomain);
    String notOwn = OwnCluster.refusal(hbase, Observer.targetPods(c, zone), zone);
    if (notOwn != null) {
      String message = "deleted mid-roll, HBase not given back (" + release + "): " + notOwn;
      log.warn("policy {}/{} {}", c.namespace(), policy.getMetadata().getName(), message);
      events.record(
          c.client(),
          policy,
          new RollModel.Event(true, RollModel.EventReason.ForeignCluster, message));
      return;
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
  }

  /** Whether a deleted policy left HBase changed: the balancer off, a server drained. */
  static boolean needsRelease(BlockCachePolicy policy) {
    RolloutStatus r = policy.getStatus() == null ? null : policy.getStatus().getRollout();
    return r != null
        && (Boolean.TRUE.equals(r.getBalancerWasOn())
            || (r.getInFlight() != null && !r.getInFlight().isEmpty()));
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
