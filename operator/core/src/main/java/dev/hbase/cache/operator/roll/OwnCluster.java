package dev.hbase.cache.operator.roll;

import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.util.List;

/**
 * Whether the HBase cluster the operator is connected to is the policy's own: the check before
 * every HBase write of a roll, a stop, a homecoming, a hold or a release.
 *
 * <p>The operator is a deputy: its client goes wherever the policy's client settings (the base
 * hbase-site's quorum, spec.hbase) point, and a policy author holds rights in their own namespace
 * only. So HBase is written to only when <em>every</em> live RegionServer of the cluster is a pod
 * of the policy's namespace: the target's own pods (their DNS name or their IP, {@link
 * PodView#servesAs}), or a pod of another StatefulSet of the same namespace, by its DNS name
 * ({@link Zone#holds}: a cluster whose RegionServers span StatefulSets, RegionServer groups on
 * their own hardware, with one policy per StatefulSet). Whoever may edit a policy in that namespace
 * may delete any of those pods anyway, which costs their cluster more than a drain does. A cluster
 * with one RegionServer elsewhere (another namespace's name, an IP that is no pod of the target, a
 * bare name that names no namespace) is refused whole: the balancer switch and the decommission
 * marks are the whole cluster's, and the attack this guards against (a policy pointing at another
 * namespace's quorum, its target named and sized like theirs) reaches a cluster none of whose
 * servers is in the author's namespace. A cluster with no RegionServer registered cannot be shown
 * to be anyone's: it is sent nothing either.
 *
 * <p>Pure: decided from the master's snapshot and the pods as observed.
 */
public final class OwnCluster {
  private OwnCluster() {}

  /** The most server names a refusal cites: enough to see the pattern, bounded on any cluster. */
  static final int CITED = 3;

  /**
   * Why HBase may not be written to, or null when the snapshot shows the cluster is the policy's.
   *
   * @param pods the target's pods as observed (below and above the replicas); none when the target
   *     cannot be observed (then only DNS names of the namespace count)
   */
  public static String refusal(ClusterSnapshot h, List<PodView> pods, Zone zone) {
    if (!h.masterReachable()) {
      return "the HBase master did not answer, so the cluster cannot be shown to be served by pods"
          + " of namespace "
          + zone.namespace()
          + ": HBase is sent nothing";
    }
    if (h.live().isEmpty()) {
      return "no RegionServer is registered with the HBase master these client settings reach, so"
          + " the cluster cannot be shown to be served by pods of namespace "
          + zone.namespace()
          + ": HBase is sent nothing";
    }
    List<ServerState> elsewhere = elsewhere(h, pods, zone);
    if (elsewhere.isEmpty()) {
      return null;
    }
    long bare = elsewhere.stream().filter(s -> bare(s.id().host())).count();
    StringBuilder b =
        new StringBuilder("HBase sent nothing: the cluster these client settings reach is not")
            .append(" served by pods of namespace ")
            .append(zone.namespace())
            .append(" alone: ")
            .append(elsewhere.size())
            .append(" of its ")
            .append(h.live().size())
            .append(" live RegionServers ");
    if (bare == elsewhere.size()) {
      b.append(elsewhere.size() == 1 ? "is" : "are").append(" registered under a bare name");
    } else {
      b.append(elsewhere.size() == 1 ? "is" : "are")
          .append(" no pod of it (another namespace's, an address of no pod of the target")
          .append(bare > 0 ? ", or " + bare + " under a bare name" : "")
          .append(")");
    }
    if (bare > 0) {
      // a bare name says nothing about another tenant; it is the user's own misconfiguration to see
      b.append(" (")
          .append(
              String.join(
                  ", ",
                  elsewhere.stream()
                      .map(s -> s.id().host())
                      .filter(OwnCluster::bare)
                      .limit(CITED)
                      .toList()))
          .append(bare > CITED ? ", ..." : "")
          .append(": a bare name says no namespace, so the operator cannot tell whose pod it is)");
    }
    return b.append(". The operator acts only on a cluster whose every RegionServer is registered")
        .append(" under the DNS name of a pod of the namespace, <pod>.<service>.")
        .append(zone.namespace())
        .append(".svc[.")
        .append(zone.clusterDomain())
        .append("], or the IP of a pod of the target; check the quorum (spec.hbase, the base")
        .append(" hbase-site) and how the RegionServers register")
        .append(" (hbase.unsafe.regionserver.hostname)")
        .toString();
  }

  /**
   * Whether the snapshot shows a live RegionServer that is no pod of the namespace: the cluster is
   * another's (or registers its servers in a way that cannot be attributed), whatever the roll
   * would do next.
   */
  public static boolean foreign(ClusterSnapshot h, List<PodView> pods, Zone zone) {
    return h.masterReachable() && !elsewhere(h, pods, zone).isEmpty();
  }

  /**
   * The HBase version the snapshot's HMaster reports, when the snapshot shows the cluster is the
   * policy's ({@link #refusal} null), else null: what is recorded as {@code status.masterVersion}
   * and decides which master keys are written (plan.MasterSite). A cluster that cannot be shown to
   * be the policy's (no RegionServer registered, one elsewhere) tells nothing about its master.
   */
  public static String masterVersion(ClusterSnapshot h, List<PodView> pods, Zone zone) {
    String v = h.masterVersion();
    return v == null || v.isBlank() || refusal(h, pods, zone) != null ? null : v.trim();
  }

  /** Whether the action writes to HBase (everything but a pod delete). */
  static boolean writesHBase(Action a) {
    return !(a instanceof RollModel.DeletePod);
  }

  private static List<ServerState> elsewhere(ClusterSnapshot h, List<PodView> pods, Zone zone) {
    return h.live().stream()
        .filter(s -> !zone.holds(s.id().host()))
        .filter(s -> pods.stream().noneMatch(p -> p.servesAs(s.id().host())))
        .toList();
  }

  /** A host name without a dot that is no IP address: a pod's bare name, say. */
  static boolean bare(String host) {
    return host != null && !host.contains(".") && !host.contains(":");
  }
}
