package dev.hbase.cache.hbaseit;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.MasterRef;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TargetRef;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Planner;
import dev.hbase.cache.operator.plan.Refusal;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Path;

/**
 * Policies for each mode, planned by the operator's real planner for a 2 GiB container and the
 * HBase line of the servers under test.
 */
final class Plans {

  static final long MEMORY_LIMIT = 2L << 30;

  private Plans() {}

  /** The policy a test uses for a mode; file modes keep their cache under {@code cacheDir}. */
  static BlockCachePolicySpec policy(CacheMode mode, Path cacheDir) {
    BlockCachePolicySpec spec =
        new BlockCachePolicySpec()
            .setTargetRef(new TargetRef().setName("hbase-regionserver"))
            .setHbaseSiteConfigMap("hbase-site")
            .setMasterRef(new MasterRef().setName("hbase-master"))
            .setMode(mode);
    // planned for the line of the servers under test (LocalHBase.SERVER_VERSION), as a policy
    // that names its cluster's release is
    if (LocalHBase.serverLine() != null) {
      spec.setHbase(new HBaseSpec().setVersion(LocalHBase.serverLine()));
    }
    switch (mode) {
      case Offheap ->
          spec.setMemory(
              new MemorySpec()
                  .setHeap(new Quantity("512Mi"))
                  .setBucketCache(new Quantity("256Mi")));
      case File, PersistentFile ->
          spec.setMemory(new MemorySpec().setBucketCache(new Quantity("384Mi")))
              .setStorage(
                  new StorageSpec().setSize(new Quantity("2Gi")).setMountPath(cacheDir.toString()));
      default -> {}
    }
    return spec;
  }

  static Plan plan(CacheMode mode, Path cacheDir) {
    return plan(policy(mode, cacheDir));
  }

  /**
   * The mode of the tests that need a file L2 and, where the line has it, a persistent one:
   * PersistentFile on 2.6, File on 2.5 (the planner refuses PersistentFile there: 2.5.13's cache
   * does not survive a restart, PersistenceIT).
   */
  static CacheMode persistentOrFile() {
    return LocalHBase.line25() ? CacheMode.File : CacheMode.PersistentFile;
  }

  /**
   * The plan of a policy that does not name its line (spec.hbase.version unset: planned for 2.6):
   * what a 2.5 cluster got before the planner knew the line.
   */
  static Plan planUnversioned(CacheMode mode, Path cacheDir) {
    return plan(policy(mode, cacheDir).setHbase(null));
  }

  /**
   * The same without prefetch on open (PersistentFile prefetches by default): for tests that count
   * HBase's own cold and warm reads, or need an L2 that stays empty without reads.
   */
  static Plan planWithoutPrefetch(CacheMode mode, Path cacheDir) {
    BlockCachePolicySpec spec = policy(mode, cacheDir);
    if (mode == CacheMode.PersistentFile && LocalHBase.line25()) {
      // refused for a policy naming 2.5 (its cache does not survive a restart): CacheModesIT
      // looks at the cache within one process life, the same there, with the keys of a policy
      // that names no line
      spec.setHbase(null);
    }
    spec.setTuning(new TuningSpec().setPrefetchOnOpen(false));
    return plan(spec);
  }

  static Plan plan(BlockCachePolicySpec spec) {
    CacheMode mode = spec.getMode();
    PlanResult result = Planner.plan(spec, MEMORY_LIMIT, null);
    if (result instanceof Refusal refusal) {
      throw new AssertionError("planner refused " + mode + ": " + refusal.reasons());
    }
    return (Plan) result;
  }

  /** What the operator would put on the RegionServer container: the plan's env and site keys. */
  static LocalHBase.RegionServerSettings settings(Plan plan) {
    return new LocalHBase.RegionServerSettings(plan.env(), plan.regionServerSite());
  }
}
