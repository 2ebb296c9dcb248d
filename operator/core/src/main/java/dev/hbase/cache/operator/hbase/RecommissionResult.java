package dev.hbase.cache.operator.hbase;

import java.util.List;

/**
 * What one {@link HBaseCluster#recommission} call found and sent. It does not wait for the moves:
 * the caller looks again (a snapshot) and calls again for regions still elsewhere.
 *
 * @param server the instance the regions were sent to (the current one at the requested host:port)
 * @param onServer requested regions that were on it already
 * @param sent regions on their way to it: sent now (the master moves them in the background), or
 *     already in transition
 * @param unknown requested regions the cluster does not know (split, merged or dropped since)
 * @param marksCleared instances whose decommission mark was cleared: the old instance's name (its
 *     mark outlives it in ZooKeeper), any other listed instance at this host:port, and this one's
 */
public record RecommissionResult(
    ServerId server,
    List<String> onServer,
    List<String> sent,
    List<String> unknown,
    List<ServerId> marksCleared) {

  public RecommissionResult {
    onServer = List.copyOf(onServer);
    sent = List.copyOf(sent);
    unknown = List.copyOf(unknown);
    marksCleared = List.copyOf(marksCleared);
  }

  /** Every known region was on the server already: nothing was sent. */
  public boolean complete() {
    return sent.isEmpty();
  }

  @Override
  public String toString() {
    return "recommission of "
        + server
        + ": "
        + onServer.size()
        + " regions there, "
        + sent.size()
        + " sent"
        + (unknown.isEmpty() ? "" : ", " + unknown.size() + " unknown")
        + ", marks cleared "
        + marksCleared;
  }
}
