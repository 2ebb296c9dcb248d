package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.hbase.RSGroupTableAccessor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.net.Address;
import org.apache.hadoop.hbase.rsgroup.RSGroupInfo;

/**
 * The RegionServer groups of a cluster, for the drain targets ({@code roll/DrainTargets}): which
 * group each server is in. HBase 2.5 and 2.6 keep them in the {@code hbase:rsgroup} table (the
 * {@code hbase-rsgroup} coprocessor; the 2.6 client has no Admin call for them, 3.0's has): read
 * with the client's own {@code RSGroupTableAccessor}, as HBase's RegionMover does for the same
 * purpose (HBASE-30323). A table read, within the connection's operation timeout.
 */
final class RegionServerGroups {
  private RegionServerGroups() {}

  /**
   * {@code host:port} -> group for every server listed in a group other than {@code default}; empty
   * when the cluster has no {@code hbase:rsgroup} table. Throws when the table exists and cannot be
   * read: the snapshot then fails rather than letting a drain cross groups.
   */
  static Map<String, String> read(Connection connection) throws IOException {
    if (!RSGroupTableAccessor.isRSGroupsEnabled(connection)) {
      return Map.of();
    }
    Map<String, String> out = new HashMap<>();
    for (RSGroupInfo g : RSGroupTableAccessor.getAllRSGroupInfo(connection)) {
      if (RSGroupInfo.DEFAULT_GROUP.equals(g.getName())) {
        continue;
      }
      for (Address a : g.getServers()) {
        out.put(a.getHostname() + ":" + a.getPort(), g.getName());
      }
    }
    // a cluster with the table but no group besides default: every server in default, no limit
    return out;
  }
}
