package dev.hbase.cache.operator.hbase;

import java.util.List;

/**
 * The outcome of {@link HBaseCluster#recommission}.
 *
 * @param server the instance the regions were sent to (the current one at the requested host:port)
 * @param onServer requested regions that are on it now
 * @param movedAgain regions HBase had placed elsewhere that were then moved one by one
 * @param notPlaced regions still elsewhere (their move failed or timed out): call again
 * @param unknown requested regions the cluster does not know (split, merged or dropped since)
 * @param marksCleared instances whose decommission mark was cleared: the old instance's name (its
 *     mark outlives it in ZooKeeper), any other listed instance at this host:port, and this one's
 */
public record RecommissionResult(
    ServerId server,
    List<String> onServer,
    List<String> movedAgain,
    List<String> notPlaced,
    List<String> unknown,
    List<ServerId> marksCleared) {

  public RecommissionResult {
    onServer = List.copyOf(onServer);
    movedAgain = List.copyOf(movedAgain);
    notPlaced = List.copyOf(notPlaced);
    unknown = List.copyOf(unknown);
    marksCleared = List.copyOf(marksCleared);
  }

  /** Every known region is back on the server. */
  public boolean complete() {
    return notPlaced.isEmpty();
  }
}
