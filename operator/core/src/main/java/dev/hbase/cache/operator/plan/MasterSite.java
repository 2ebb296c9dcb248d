package dev.hbase.cache.operator.plan;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The HMaster's keys of a PersistentFile policy with a {@code masterRef}, fitted to the HBase line
 * and to what the user's base hbase-site already says. Pure.
 *
 * <p>The user's hbase-site is theirs: a key the plan would set that the base file sets already is
 * kept, with a warning that says what the cache-aware part then misses, never silently replaced.
 * RegionServer groups keep working: where the base file runs {@code RSGroupBasedLoadBalancer}, the
 * cache-aware balancer goes inside it, as the balancer of each group ({@code
 * hbase.rsgroup.grouploadbalancer.class}), unless the base file names a group balancer of its own.
 */
final class MasterSite {
  private MasterSite() {}

  static final String BALANCER = "hbase.master.loadbalancer.class";
  static final String GROUP_BALANCER = "hbase.rsgroup.grouploadbalancer.class";
  static final String RSGROUP_BALANCER = "org.apache.hadoop.hbase.rsgroup.RSGroupBasedLoadBalancer";
  static final String REGION_COUNT_COST = "hbase.master.balancer.stochastic.regionCountCost";

  /** The keys, and the warnings about what the base file kept. */
  record Keys(Map<String, String> site, List<String> warnings) {}

  /**
   * @param line the policy's HBase line
   * @param persistentPath the RegionServers' hbase.bucketcache.persistent.path
   * @param base the base hbase-site (empty when unknown, e.g. {@code plan} without one)
   */
  static Keys persistentFile(HBaseLine line, String persistentPath, Map<String, String> base) {
    Map<String, String> m = new TreeMap<>();
    List<String> warnings = new java.util.ArrayList<>();
    // A region move waits three times for the master to batch work: the close RPC, the
    // assignment queue, the open RPC, 150 ms each by default. Reads of the region wait all of
    // it (measured on 2.6.4: ~450 ms of a ~500 ms move); a drain and its reload move every
    // region of a restarted server twice. Batches still form under load (a queue that fills
    // is sent at once). Both keys exist in 2.5 and 2.6.
    m.put("hbase.assignment.dispatch.wait.msec", Integer.toString(Planner.MOVE_BATCH_WAIT_MS));
    m.put(
        "hbase.procedure.remote.dispatcher.delay.msec",
        Integer.toString(Planner.MOVE_BATCH_WAIT_MS));
    if (!line.cacheAwareBalancer()) {
      warnings.add(
          "HBase "
              + line.line
              + " has no CacheAwareLoadBalancer (2.6's): the master's balancer is left as the base"
              + " hbase-site sets it and does not weigh where regions are cached; the roll still"
              + " sends each drained region back to its restarted server");
      return new Keys(m, warnings);
    }
    String balancer = base.get(BALANCER);
    String cost = base.get(REGION_COUNT_COST);
    boolean groups = RSGROUP_BALANCER.equals(balancer);
    String where = groups ? GROUP_BALANCER : BALANCER;
    String theirs = groups ? base.get(GROUP_BALANCER) : balancer;
    if (theirs == null || theirs.equals(Planner.CACHE_AWARE_BALANCER)) {
      // The balancer's cache cost function is active only when the master sees persistence.
      m.put(where, Planner.CACHE_AWARE_BALANCER);
      m.put("hbase.bucketcache.persistent.path", persistentPath);
      if (cost == null) {
        m.put(REGION_COUNT_COST, Integer.toString(Planner.REGION_COUNT_COST));
      } else if (!cost.equals(Integer.toString(Planner.REGION_COUNT_COST))) {
        warnings.add(
            "the base hbase-site sets "
                + REGION_COUNT_COST
                + "="
                + cost
                + ": kept (the planner's "
                + Planner.REGION_COUNT_COST
                + " keeps a restarted server from being left with few regions after a roll)");
      }
    } else {
      warnings.add(
          "the base hbase-site sets "
              + where
              + "="
              + theirs
              + ": kept, so the CacheAwareLoadBalancer is not configured and HBase's balancer does"
              + " not weigh where regions are cached"
              + (groups ? " (RegionServer groups: it is each group's balancer)" : ""));
    }
    return new Keys(m, warnings);
  }
}
