package dev.hbase.cache.operator.hbase;

import java.util.List;

/**
 * The HBase admin operations the rolling restart needs, in plain Java types so that the roller and
 * its test fake need no HBase classes. {@link AdminHBaseCluster} implements it with the HBase Admin
 * API. Every call is bounded in time (seconds): a dead master makes calls fail, not hang; none
 * polls or sleeps until HBase has finished something (the roller owns every wait).
 */
public interface HBaseCluster extends AutoCloseable {

  /**
   * The cluster's state; never throws: an unreachable master gives {@code masterReachable=false}.
   */
  ClusterSnapshot snapshot();

  /**
   * Marks the server decommissioned (no new regions go to it) and moves each region listed in
   * {@code targets} there (region encoded name -> target server); that runs in the background: wait
   * until the snapshot shows the server with no regions, and call again for regions still there
   * once nothing is in transition. hbase:meta, if listed, is moved first, alone.
   */
  void drain(ServerId server, java.util.Map<String, ServerId> targets) throws HBaseClusterException;

  /**
   * Returns regions to the (restarted) RegionServer at {@code server}'s host and port, whatever its
   * start code now, and clears the decommission marks of every instance at that host and port.
   * Returns at once: the master moves the regions in the background, and the caller (the roller)
   * looks again and calls again for the regions still elsewhere. hbase:meta, if listed, is moved
   * only once every other listed region is there (last and alone). Throws {@link
   * HBaseClusterException.NotReady} if the new instance has not registered or sent its first load
   * report: regions sent to it before that go to random servers. With no region listed and no new
   * instance yet, it clears the marks of the instances at that host and port that are gone.
   */
  RecommissionResult recommission(ServerId server, List<String> encodedRegionNames)
      throws HBaseClusterException;

  /** Moves one region to the server and waits for the move. */
  void move(String encodedRegionName, ServerId target) throws HBaseClusterException;

  /**
   * Switches the balancer on or off without waiting for a balance run in progress; returns whether
   * it was on before.
   */
  boolean balancer(boolean on) throws HBaseClusterException;

  /**
   * Has the master process exactly this instance (host, port and start code) as dead now: a
   * ServerCrashProcedure, its regions reassigned at once, as after its ZooKeeper session expired.
   * Checks first, on the master and at the instance's endpoint, that it is still listed live and
   * does not answer as itself: a live instance is never expired ({@link ExpireResult}).
   */
  ExpireResult expire(ServerId server) throws HBaseClusterException;

  /** Servers currently marked decommissioned (old instances included). */
  List<ServerId> decommissioned() throws HBaseClusterException;

  /**
   * Asks the RegionServer to stop as it does after SIGTERM (it closes its regions, writes its cache
   * map and exits); returns once the server has the request.
   */
  void stopServer(ServerId server, String why) throws HBaseClusterException;

  @Override
  void close();
}
