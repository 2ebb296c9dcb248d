package dev.hbase.cache.operator.plan;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The HMaster's keys of a PersistentFile policy with a {@code masterRef}, fitted to the HBase line
 * the master is known to run and to what the user's base hbase-site already says. Pure.
 *
 * <p>A master started with a class its release does not have does not start: 2.5 has no {@code
 * CacheAwareLoadBalancer} (HBaseLineIT). So the keys only 2.6 has are written for a master the
 * operator has seen run 2.6, or one the policy says runs it ({@code spec.hbase.version}), never for
 * one seen to run another line ({@link #line}). What the master reported comes in as an input
 * ({@code status.masterVersion}, recorded by the roll step from the policy's own cluster): the
 * planner reads nothing.
 *
 * <p>The user's hbase-site is theirs: a key the plan would set that the base file sets already is
 * kept, with a warning that says what the cache-aware part then misses, never silently replaced.
 * RegionServer groups keep working: where the base file runs {@code RSGroupBasedLoadBalancer}, the
 * cache-aware balancer goes inside it, as the balancer of each group ({@code
 * hbase.rsgroup.grouploadbalancer.class}), unless the base file names a group balancer of its own.
 */
public final class MasterSite {
  private MasterSite() {}

  static final String BALANCER = "hbase.master.loadbalancer.class";
  static final String GROUP_BALANCER = "hbase.rsgroup.grouploadbalancer.class";
  static final String RSGROUP_BALANCER = "org.apache.hadoop.hbase.rsgroup.RSGroupBasedLoadBalancer";
  static final String REGION_COUNT_COST = "hbase.master.balancer.stochastic.regionCountCost";

  static final String CACHE_AWARE_BALANCER =
      "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer";

  /**
   * The CacheAwareLoadBalancer's weight of region-count skew (hbase 2.6.4 default 20, the same as
   * its cache cost's; the StochasticLoadBalancer's default is 500). At 20 against 20 the balancer
   * trades an even spread for cache: a drain leaves a fully cached copy of each region it moved on
   * the server it went to, HBase 2.6.4 counts that server the region's "old server" with ratio 1.0,
   * and its candidate generators propose moving the region back there; one such move is worth more
   * than the skew it adds (the likely cause of a restarted server left with 0 of 8 regions, 0/4/4,
   * after a roll on kind). HBASE-30300 ("disproportionally favouring cache ratio over skewness")
   * changes this upstream, after 2.6.4. At 500 a move that takes a server off the mean costs more
   * than any cache gain; the price is that even counts with regions away from their caches no
   * longer start a balancer run for that alone (docs/concepts/roll.md). The value of {@link
   * #REGION_COUNT_COST}.
   */
  static final int REGION_COUNT_WEIGHT = 500;

  /** The master's batching waits for region moves (HBase default 150 ms each). */
  static final int MOVE_BATCH_WAIT_MS = 10;

  /** What the master keys of 2.6 are, for the messages. */
  static final String TWO_SIX_KEYS =
      "the master keys only HBase 2.6 has (the CacheAwareLoadBalancer, its regionCountCost and the"
          + " persistence path)";

  /** The keys, and the warnings about what the base file kept. */
  record Keys(Map<String, String> site, List<String> warnings) {}

  /**
   * The line the master's keys are written for.
   *
   * @param line the line whose keys are written: 2.5's (the line-neutral ones, which every line
   *     reads) while 2.6's are withheld
   * @param withheld why 2.6's are left out of a plan made for 2.6, else null
   * @param unseen withheld only because the operator has not yet seen the HMaster's version
   *     (spec.hbase.version unset, none recorded): the roll step asks the master for it, and a
   *     master not yet pointed at its derived hbase-site is pointed there only once it is seen, so
   *     that it restarts once, onto the keys of its line
   */
  public record Line(HBaseLine line, String withheld, boolean unseen) {}

  /**
   * The line of a policy's master keys, for what its HMaster last reported ({@code
   * status.masterVersion}; null: not seen).
   *
   * <ul>
   *   <li>a plan for 2.5: 2.5's keys;
   *   <li>the master seen on a line without the CacheAwareLoadBalancer (2.5): withheld, whatever
   *       the spec says (the roll is blocked too: {@link HBaseLine#unsafe});
   *   <li>spec.hbase.version 2.6: 2.6's keys, seen or not (the user said what runs);
   *   <li>unset: 2.6's once the master has been seen to run 2.6; withheld while it has not been
   *       seen, or reports a version of no line the operator knows (a vendor's).
   * </ul>
   */
  public static Line line(BlockCachePolicySpec spec, String masterVersion) {
    String asked = spec.getHbase() == null ? null : spec.getHbase().getVersion();
    HBaseLine planned = HBaseLine.of(asked).orElse(HBaseLine.DEFAULT);
    if (!planned.cacheAwareBalancer()) {
      return new Line(planned, null, false);
    }
    String seen = masterVersion == null || masterVersion.isBlank() ? null : masterVersion.trim();
    var running = HBaseLine.of(seen);
    if (running.isPresent() && !running.get().cacheAwareBalancer()) {
      return withheld(
          HBaseLine.mismatch(spec, seen).orElseThrow()
              + "; meanwhile "
              + TWO_SIX_KEYS
              + " are not written: a "
              + running.get().line
              + " master configured with the CacheAwareLoadBalancer does not start",
          false);
    }
    if (asked != null || running.isPresent()) {
      return new Line(planned, null, false);
    }
    if (seen != null) {
      return withheld(
          HBaseLine.mismatch(spec, seen).orElseThrow()
              + "; meanwhile "
              + TWO_SIX_KEYS
              + " are not written: the operator cannot tell which line "
              + seen
              + " is",
          false);
    }
    return withheld(
        TWO_SIX_KEYS
            + " wait: spec.hbase.version is unset and the operator has not yet seen the HMaster"
            + " report its version (status.masterVersion; it asks at each reconcile until it has)."
            + " They are written once the master reports 2.6, and a master not yet pointed at its"
            + " derived hbase-site is pointed there only then; a master that reports 2.5 never"
            + " gets them. Set spec.hbase.version to 2.6 to write them at once",
        true);
  }

  private static Line withheld(String why, boolean unseen) {
    return new Line(HBaseLine.V2_5, why, unseen);
  }

  /**
   * Whether a policy's master keys of 2.6 are withheld for what its master reported, or for want of
   * a report: the roll step asks the master each reconcile meanwhile (a read; nothing is sent).
   */
  public static boolean awaitsMaster(BlockCachePolicySpec spec, String masterVersion) {
    return applies(spec) && line(spec, masterVersion).withheld() != null;
  }

  /** Whether they are withheld only because the master has not been seen ({@link Line#unseen}). */
  public static boolean unseen(BlockCachePolicySpec spec, String masterVersion) {
    return applies(spec) && line(spec, masterVersion).unseen();
  }

  /** Whether the policy has master keys at all: PersistentFile with a masterRef. */
  static boolean applies(BlockCachePolicySpec spec) {
    return spec != null
        && spec.getMode() != null
        && spec.getMode().isPersistent()
        && spec.getMasterRef() != null;
  }

  /**
   * @param master the line of the master's keys ({@link #line})
   * @param persistentPath the RegionServers' hbase.bucketcache.persistent.path
   * @param base the base hbase-site (empty when unknown, e.g. {@code plan} without one)
   */
  static Keys persistentFile(Line master, String persistentPath, Map<String, String> base) {
    HBaseLine line = master.line();
    Map<String, String> m = new TreeMap<>();
    List<String> warnings = new java.util.ArrayList<>();
    // A region move waits three times for the master to batch work: the close RPC, the
    // assignment queue, the open RPC, 150 ms each by default. Reads of the region wait all of
    // it (measured on 2.6.4: ~450 ms of a ~500 ms move); a drain and its reload move every
    // region of a restarted server twice. Batches still form under load (a queue that fills
    // is sent at once). Both keys exist in 2.5 and 2.6.
    m.put("hbase.assignment.dispatch.wait.msec", Integer.toString(MOVE_BATCH_WAIT_MS));
    m.put("hbase.procedure.remote.dispatcher.delay.msec", Integer.toString(MOVE_BATCH_WAIT_MS));
    if (master.withheld() != null) {
      warnings.add(master.withheld());
      return new Keys(m, warnings);
    }
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
    if (theirs == null || theirs.equals(CACHE_AWARE_BALANCER)) {
      // The balancer's cache cost function is active only when the master sees persistence.
      m.put(where, CACHE_AWARE_BALANCER);
      m.put("hbase.bucketcache.persistent.path", persistentPath);
      if (cost == null) {
        m.put(REGION_COUNT_COST, Integer.toString(REGION_COUNT_WEIGHT));
      } else if (!cost.equals(Integer.toString(REGION_COUNT_WEIGHT))) {
        warnings.add(
            "the base hbase-site sets "
                + REGION_COUNT_COST
                + "="
                + cost
                + ": kept (the planner's "
                + REGION_COUNT_WEIGHT
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
