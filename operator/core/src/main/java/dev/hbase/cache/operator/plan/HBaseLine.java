package dev.hbase.cache.operator.plan;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What each HBase line the operator is tested on supports, for the planner: which keys it knows and
 * what it cannot do. Pure.
 *
 * <p>The line comes from the policy ({@code spec.hbase.version}, default 2.6): the planner runs
 * before HBase is reachable (a new policy on a cluster not up yet, {@code make plan} without a
 * cluster), and its output must be a function of its input so that the revision of the pods does
 * not change with what the master answered last. The operator compares it with what the HMaster
 * reports once it reaches HBase ({@link #mismatch}): a policy that names the wrong line gets a
 * condition, not a plan that a restarted master could not load. The one part of a plan that does
 * depend on what the master reported is the master's own keys, which are not in the pods' revision:
 * 2.6's are written only for a master seen or said to run 2.6 ({@link MasterSite#line}), the
 * version passed in to the planner as an input.
 *
 * <p>What differs, checked in the hbase-server jars and on real processes ({@code make test-hbase
 * HBASE_VERSION=2.5.13-hadoop3}; docs/operations/compatibility.md): 2.5.13's persistent BucketCache
 * does not survive a restart (PersistentFile is refused), it has no {@code CacheAwareLoadBalancer}
 * (a master configured with it does not start) and no {@code
 * hbase.bucketcache.persist.intervalinmillis}, its load reports carry no per-region cached sizes
 * ({@code getRegionCachedInfo} is empty). Every key the other modes write is one 2.5 reads, so
 * their plans are the same on both lines.
 */
public enum HBaseLine {
  V2_5("2.5"),
  V2_6("2.6");

  /** The line a policy without {@code spec.hbase.version} is planned for. */
  public static final HBaseLine DEFAULT = V2_6;

  static final String PERSIST_INTERVAL = "hbase.bucketcache.persist.intervalinmillis";

  /** The line's name: 2.5, 2.6. */
  public final String line;

  HBaseLine(String line) {
    this.line = line;
  }

  /**
   * The line of a version string (2.5, 2.6.4, 2.5.13-hadoop3), or empty when the operator does not
   * know it (the CRD's CEL refuses such a spec.hbase.version; the planner repeats it offline).
   */
  public static Optional<HBaseLine> of(String version) {
    if (version == null || !version.matches(HBaseSpec.VERSION_RULE)) {
      return Optional.empty();
    }
    String[] p = version.split("[.-]");
    for (HBaseLine l : values()) {
      if (l.line.equals(p[0] + "." + p[1])) {
        return Optional.of(l);
      }
    }
    return Optional.empty();
  }

  /** The line a policy is planned for; null with a reason in {@code reasons} when unknown. */
  static HBaseLine of(BlockCachePolicySpec spec, List<String> reasons) {
    String v = spec.getHbase() == null ? null : spec.getHbase().getVersion();
    if (v == null) {
      return DEFAULT;
    }
    Optional<HBaseLine> l = of(v);
    if (l.isEmpty()) {
      reasons.add(
          "hbase.version \""
              + v
              + "\" is not a line this operator knows: 2.5 or 2.6, or a release of them (2.5.13,"
              + " 2.6.4-hadoop3)");
      return null;
    }
    return l.get();
  }

  /** The master's CacheAwareLoadBalancer (HBASE-27389, 2.6.0): only 2.6. */
  public boolean cacheAwareBalancer() {
    return this == V2_6;
  }

  /** Periodic checkpoints of the persistent cache map (HBASE-27686, 2.6.0): only 2.6. */
  public boolean persistInterval() {
    return this == V2_6;
  }

  /**
   * Load reports with each region's cached size ({@code ServerMetrics.getRegionCachedInfo}): only
   * 2.6. On 2.5 the drain targets fall back to rendezvous hashing and no homecoming starts.
   */
  public boolean regionCachedInfo() {
    return this == V2_6;
  }

  /**
   * A persistent BucketCache that survives a restart: only 2.6. HBase 2.5.13 fails to write its
   * persistence map at shutdown once data blocks are cached (a NullPointerException in {@code
   * BucketProtoUtils.toPB}: the blocks a read caches carry no block type), and the map it leaves
   * stops the next start of the RegionServer (PersistenceIT on 2.5.13).
   */
  public boolean persistentCache() {
    return this == V2_6;
  }

  /** What the policy asks that this line cannot do, each naming the line. */
  List<String> refusals(BlockCachePolicySpec spec) {
    List<String> out = new ArrayList<>();
    if (!persistentCache()
        && spec.getMode() == dev.hbase.cache.api.v1alpha1.CacheMode.PersistentFile) {
      out.add(
          "mode PersistentFile: HBase "
              + line
              + "'s BucketCache does not write its persistence map at shutdown once it holds data"
              + " blocks (measured on 2.5.13: a NullPointerException in BucketProtoUtils.toPB), and"
              + " the map it leaves stops the RegionServer's next start; use File (a cache file that"
              + " starts cold after each restart), or HBase 2.6");
    }
    return out;
  }

  /**
   * Why the version the HMaster reports is not on the policy's line, or empty when it is (or the
   * master's version is unknown): for a condition, as the planner cannot see the master.
   */
  public static Optional<String> mismatch(BlockCachePolicySpec spec, String masterVersion) {
    if (masterVersion == null || masterVersion.isBlank()) {
      return Optional.empty();
    }
    String asked = spec.getHbase() == null ? null : spec.getHbase().getVersion();
    HBaseLine planned = of(asked).orElse(DEFAULT);
    Optional<HBaseLine> running = of(masterVersion.trim());
    if (running.equals(Optional.of(planned))) {
      return Optional.empty();
    }
    return Optional.of(
        "the HMaster reports HBase "
            + masterVersion.trim()
            + " but the policy is planned for "
            + planned.line
            + (asked == null
                ? " (the default: spec.hbase.version is unset)"
                : " (spec.hbase.version " + asked + ")")
            + ": set spec.hbase.version to "
            + running.map(l -> l.line).orElse("a line this operator supports (2.5 or 2.6)"));
  }

  /**
   * Why a roll must not restart pods onto the policy's plan on the line the HMaster reports, or
   * empty when it may (or the master's line is unknown: a vendor's version string, none reported).
   * Only a PersistentFile plan made for 2.6 differs in what it asks of a 2.5 RegionServer: a
   * persistent cache that 2.5 cannot restart from ({@link #persistentCache}). The other modes'
   * plans are the same on both lines ({@link #mismatch} still warns of them).
   */
  public static Optional<String> unsafe(BlockCachePolicySpec spec, String masterVersion) {
    if (masterVersion == null
        || spec.getMode() != dev.hbase.cache.api.v1alpha1.CacheMode.PersistentFile) {
      return Optional.empty();
    }
    String asked = spec.getHbase() == null ? null : spec.getHbase().getVersion();
    HBaseLine planned = of(asked).orElse(DEFAULT);
    Optional<HBaseLine> running = of(masterVersion.trim());
    if (running.isEmpty() || running.get().persistentCache() || !planned.persistentCache()) {
      return Optional.empty();
    }
    return Optional.of(
        "no pod is restarted: the HMaster reports HBase "
            + masterVersion.trim()
            + " and the policy's PersistentFile plan is for "
            + planned.line
            + (asked == null
                ? " (spec.hbase.version is unset)"
                : " (spec.hbase.version " + asked + ")")
            + ", whose persistent cache a "
            + running.get().line
            + " RegionServer does not restart from; what the roll changed in HBase is given back."
            + " Set spec.hbase.version to "
            + running.get().line
            + " and mode File (a cache file that starts cold after each restart), or run HBase 2.6");
  }
}
