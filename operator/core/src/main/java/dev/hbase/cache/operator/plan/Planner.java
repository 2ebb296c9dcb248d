package dev.hbase.cache.operator.plan;

import static dev.hbase.cache.operator.plan.Sizes.GiB;
import static dev.hbase.cache.operator.plan.Sizes.MiB;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Turns a policy and the RegionServer container's memory limit into a {@link Plan}, or refuses with
 * reasons. Pure: no I/O, same input, same output.
 *
 * <p>This class is the public entry point and follows one plan from spec to output; each stage is a
 * package-private piece of its own, in the order {@link #plan} calls them:
 *
 * <ol>
 *   <li>{@link PolicyRules}: what the spec must satisfy on its own (the CRD's rules, repeated
 *       offline), the HBase line it names ({@link HBaseLine}) and its sizes as quantities;
 *   <li>{@link MemoryBudget}: the memory limit shared out between heap, direct memory, JVM
 *       overhead, page cache and the L2 for the mode, and what HBase and the container refuse of it
 *       (the memory model is in its header);
 *   <li>{@link CacheVolumes}: the cache volume of a file mode, a PVC or tmpfs, and its size;
 *   <li>the outputs: the RegionServers' hbase-site keys ({@link RegionServerSite}), the HMaster's
 *       ({@link MasterSite}), the JVM options ({@link JvmOptions#line}), and here the environment,
 *       the termination grace period and the config hash ({@code render}).
 * </ol>
 *
 * A policy is refused with all the reasons of the first stage that finds any: those of the spec
 * together, else those of the budget and the volume together; nothing is rendered for a refused
 * policy. The stages are covered through this class by PlannerTest and BadPolicies.
 */
public final class Planner {
  private Planner() {}

  /** Plans a policy with the operator's defaults (jvm.extraOptions from the allow-list). */
  public static PlanResult plan(BlockCachePolicySpec spec, Long memoryLimit, Long memoryRequest) {
    return plan(spec, memoryLimit, memoryRequest, JvmOptions.Trust.ALLOW_LIST);
  }

  /**
   * Plans a policy for a RegionServer container.
   *
   * @param spec the policy
   * @param memoryLimit the container's memory limit in bytes (null: not set, refused)
   * @param memoryRequest the container's memory request in bytes, or null
   * @param jvmTrust which jvm.extraOptions the operator's install allows ({@link JvmOptions})
   */
  public static PlanResult plan(
      BlockCachePolicySpec spec, Long memoryLimit, Long memoryRequest, JvmOptions.Trust jvmTrust) {
    return plan(spec, memoryLimit, memoryRequest, jvmTrust, Map.of(), null);
  }

  /**
   * Same, knowing the base hbase-site the plan's keys go into (the master keys it already sets are
   * kept) and the version the policy's HMaster last reported (with spec.hbase.version unset, the
   * master keys only 2.6 has wait for a report of 2.6): {@link MasterSite}.
   *
   * @param baseSite the base hbase-site's properties (empty: none known)
   * @param masterVersion {@code status.masterVersion}, null when the operator has not seen it
   */
  public static PlanResult plan(
      BlockCachePolicySpec spec,
      Long memoryLimit,
      Long memoryRequest,
      JvmOptions.Trust jvmTrust,
      Map<String, String> baseSite,
      String masterVersion) {
    List<String> reasons = new ArrayList<>();
    if (spec == null || spec.getMode() == null) {
      return new Refusal(List.of("spec.mode is required: one of " + CacheMode.ALLOWED));
    }
    if (memoryLimit == null || memoryLimit <= 0) {
      return new Refusal(
          List.of(
              "the RegionServer container has no memory limit: the planner sizes heap, direct"
                  + " memory and caches from it; set resources.limits.memory on the container"));
    }
    CacheMode mode = spec.getMode();
    MemorySpec mem = spec.getMemory() == null ? new MemorySpec() : spec.getMemory();
    StorageSpec storage = spec.getStorage();
    TuningSpec tuning = spec.getTuning() == null ? new TuningSpec() : spec.getTuning();

    // --- the spec on its own ---
    PolicyRules.check(spec, mode, mem, storage, tuning, jvmTrust, reasons);
    HBaseLine line = HBaseLine.of(spec, reasons);
    if (line != null) {
      reasons.addAll(line.refusals(spec));
    }
    boolean tmpfs = storage != null && StorageSpec.MEDIUM_MEMORY.equals(storage.getMedium());
    Long heapAsked = PolicyRules.bytes(mem.getHeap(), "memory.heap", reasons);
    Long l2Asked = PolicyRules.bytes(mem.getBucketCache(), "memory.bucketCache", reasons);
    Long overheadAsked = PolicyRules.bytes(mem.getOverhead(), "memory.overhead", reasons);
    Long storageSize =
        storage == null ? null : PolicyRules.bytes(storage.getSize(), "storage.size", reasons);
    if (!reasons.isEmpty()) {
      return new Refusal(reasons);
    }

    // --- the memory budget and the cache volume ---
    MemoryBudget budget =
        MemoryBudget.of(
            mode, memoryLimit, tmpfs, mem, heapAsked, l2Asked, overheadAsked, storageSize);
    budget.refusals(mem, tuning, reasons);
    Plan.CacheVolume volume =
        CacheVolumes.of(mode, storage, storageSize, budget.l2(), tmpfs, reasons);
    if (!reasons.isEmpty()) {
      return new Refusal(reasons);
    }

    return render(
        spec,
        budget,
        volume,
        tuning,
        line,
        baseSite,
        masterVersion,
        budget.warnings(memoryRequest));
  }

  /**
   * Why rolling from {@code previous} to {@code next} throws away persisted caches: HBase refuses
   * to restore a cache map written for another capacity, engine or bucket layout.
   *
   * @param previous the RegionServer hbase-site keys of the plan in force (status.plan), or null
   * @return empty when the caches survive (or there is no persisted cache to lose)
   */
  public static List<String> cacheResetReasons(Map<String, String> previous, Plan next) {
    return RegionServerSite.cacheResetReasons(previous, next);
  }

  /**
   * The plan of a policy nothing refuses: its keys, JVM options and environment, and what a roll
   * compares pods against.
   *
   * @param warnings the budget's advice; the master keys' warnings are added after it
   */
  private static Plan render(
      BlockCachePolicySpec spec,
      MemoryBudget budget,
      Plan.CacheVolume volume,
      TuningSpec tuning,
      HBaseLine line,
      Map<String, String> baseSite,
      String masterVersion,
      List<String> warnings) {
    CacheMode mode = budget.mode();
    RegionServerSite.Keys rs = RegionServerSite.of(mode, budget, volume, tuning, line);

    Map<String, String> master = new TreeMap<>();
    if (mode.isPersistent() && spec.getMasterRef() != null) {
      MasterSite.Keys keys =
          MasterSite.persistentFile(
              MasterSite.line(spec, masterVersion),
              rs.persistentPath(),
              baseSite == null ? Map.of() : baseSite);
      master.putAll(keys.site());
      warnings.addAll(keys.warnings());
    }

    String jvmOptions = JvmOptions.line(spec.getJvm());
    Map<String, String> env = new LinkedHashMap<>();
    env.put(Plan.ENV_HEAP, budget.heap() / MiB + "m");
    env.put(Plan.ENV_OFFHEAP, budget.direct() / MiB + "m");
    env.put(Plan.ENV_OPTS, jvmOptions);

    long memstoreBytes = (long) (budget.heap() * budget.memstore());
    long grace = 60 + memstoreBytes / (50 * MiB) + (mode.isPersistent() ? budget.l2() / GiB : 0);
    grace = Sizes.clamp(grace, 120, 3600);

    String hash = hash(env, rs.site(), rs.removed(), volume);
    return new Plan(
        mode,
        budget.limit(),
        budget.heap(),
        budget.direct(),
        budget.overhead(),
        budget.pageCache(),
        budget.l1(),
        budget.l2(),
        rs.ioEngine(),
        rs.cacheFile(),
        rs.persistentPath(),
        volume,
        jvmOptions,
        Collections.unmodifiableMap(env),
        Collections.unmodifiableMap(rs.site()),
        Collections.unmodifiableSet(rs.removed()),
        Collections.unmodifiableMap(master),
        grace,
        hash,
        List.copyOf(warnings));
  }

  /**
   * A stable hash of everything that needs a RegionServer restart to take effect: the environment,
   * the RegionServers' keys set and removed, and the cache volume.
   */
  static String hash(
      Map<String, String> env,
      Map<String, String> rs,
      Set<String> removed,
      Plan.CacheVolume volume) {
    StringBuilder b = new StringBuilder();
    new TreeMap<>(env)
        .forEach((k, v) -> b.append("env:").append(k).append('=').append(v).append('\n'));
    rs.forEach((k, v) -> b.append("rs:").append(k).append('=').append(v).append('\n'));
    removed.forEach(k -> b.append("rm:").append(k).append('\n'));
    if (volume != null) {
      b.append("vol:")
          .append(volume.mountPath())
          .append(volume.memory() ? ":tmpfs" : ":pvc")
          .append('\n');
    }
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256")
              .digest(b.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
