package dev.hbase.cache.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.cli.PlanCommand;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache-map-guard: its script run by the real {@code sh} on files laid out as HBase 2.6.4
 * writes them (BucketProtoUtils.serializeAsPB: "V2UF", chunk size, number of chunks, chunks, each a
 * length-delimited message; checked against real HBase by hbase-it's PersistenceIT and
 * CacheMapDamageIT), and where it is rendered: an init container and the RegionServer container's
 * postStart hook.
 */
class CacheMapGuardTest {

  @TempDir Path dir;

  static byte[] chunkedMap(long chunkSize, long chunks, byte[] rest) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    DataOutputStream d = new DataOutputStream(b); // big-endian, as HBase's Bytes.toBytes(long)
    d.write("V2UF".getBytes(StandardCharsets.US_ASCII));
    d.writeLong(chunkSize);
    d.writeLong(chunks);
    d.write(rest);
    return b.toByteArray();
  }

  record Run(int exit, String output, String terminationMessage) {}

  Run guard(Path map) throws Exception {
    Path log = dir.resolve("termination-log");
    Files.deleteIfExists(log);
    ProcessBuilder pb =
        new ProcessBuilder(
            "sh", "-c", PodHooks.CACHE_MAP_GUARD_SCRIPT, PodHooks.CACHE_MAP_GUARD, map.toString());
    pb.environment().put("TERMINATION_LOG", log.toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), out, Files.exists(log) ? Files.readString(log).strip() : null);
  }

  /** A length-delimited protobuf message of {@code n} bytes, as writeDelimitedTo writes it. */
  static byte[] chunk(int n) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int len = n; ; len >>>= 7) {
      if (len < 0x80) {
        b.write(len);
        break;
      }
      b.write((len & 0x7f) | 0x80);
    }
    b.writeBytes(new byte[n]);
    return b.toByteArray();
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      b.writeBytes(p);
    }
    return b.toByteArray();
  }

  @Test
  void removesTheMapAnEmptyCacheWrote() throws Exception {
    Path map = dir.resolve("bucketcache.map");
    Files.write(map, chunkedMap(10_000, 0, new byte[0]));
    assertThat(Files.size(map)).isEqualTo(20);

    Run r = guard(map);

    assertThat(r.exit()).isZero();
    assertThat(map).doesNotExist();
    assertThat(r.terminationMessage())
        .startsWith("EmptyCacheMapRemoved: removed the empty BucketCache persistence map " + map)
        .contains("HBASE-29857");
  }

  /**
   * Every file HBase 2.6.4 would not restore a cache from goes: the ones it dies on (it ends where
   * a chunk should begin: CacheMapDamageIT on real HBase) and the ones it drops at start.
   */
  @Test
  void removesEveryMapHBaseCannotRestore() throws Exception {
    byte[] three = concat(chunk(300), chunk(200), chunk(5));
    Map<String, byte[]> truncated = new LinkedHashMap<>();
    truncated.put("20 bytes claiming a chunk", chunkedMap(10_000, 1, new byte[0]));
    truncated.put("cut after chunk 1 of 3", chunkedMap(1, 3, chunk(300)));
    truncated.put("cut after chunk 2 of 3", chunkedMap(1, 3, concat(chunk(300), chunk(200))));
    truncated.put(
        "cut inside chunk 3", Arrays.copyOf(chunkedMap(1, 3, three), 20 + three.length - 2));
    truncated.put("cut inside a chunk's length", chunkedMap(1, 1, new byte[] {(byte) 0xac}));
    truncated.put("cut inside the header", Arrays.copyOf(chunkedMap(1, 3, three), 15));
    truncated.put(
        "the old format, cut after its magic", "PBUF".getBytes(StandardCharsets.US_ASCII));
    Map<String, byte[]> unreadable = new LinkedHashMap<>();
    unreadable.put("zero-filled", new byte[530]);
    unreadable.put("empty", new byte[0]);
    unreadable.put("no map", "<configuration/>".getBytes(StandardCharsets.US_ASCII));
    for (var damaged :
        List.of(
            Map.entry("TruncatedCacheMapRemoved: removed the truncated", truncated),
            Map.entry("UnreadableCacheMapRemoved: removed the unreadable", unreadable))) {
      damaged
          .getValue()
          .forEach(
              (what, content) -> {
                try {
                  Path map = dir.resolve("bucketcache.map");
                  Files.write(map, content);
                  Run r = guard(map);
                  assertThat(r.exit()).isZero();
                  assertThat(map).as(what + ": " + r.output()).doesNotExist();
                  assertThat(r.terminationMessage())
                      .as(what)
                      .startsWith(damaged.getKey() + " BucketCache persistence map " + map)
                      .contains("(" + content.length + " bytes)")
                      .endsWith("the RegionServer starts with an empty L2");
                } catch (Exception e) {
                  throw new AssertionError(what, e);
                }
              });
    }
    Files.write(dir.resolve("m"), chunkedMap(1, 3, chunk(300)));
    assertThat(guard(dir.resolve("m")).terminationMessage())
        .contains("it ends after chunk 1 of 3, at byte 322: HBase 2.6 dies reading it");
    Files.write(dir.resolve("m"), chunkedMap(1, 3, new byte[0]));
    assertThat(guard(dir.resolve("m")).terminationMessage())
        .contains("it ends after its header, before chunk 1 of 3");
  }

  @Test
  void keepsEveryCompleteMap() throws Exception {
    byte[][] files = {
      // three chunks, one with a two-byte length
      chunkedMap(1, 3, concat(chunk(300), chunk(200), chunk(5))),
      // 0 chunks counted, one there (HBase reads one chunk whatever it counts)
      chunkedMap(10_000, 0, chunk(10)),
      // bytes after the last chunk (HBase does not read them)
      concat(chunkedMap(1, 1, chunk(7)), new byte[] {1, 2, 3}),
      // a count below 0: HBase reads one chunk
      chunkedMap(1, -5, chunk(1)),
      // the old format: "PBUF" and one message
      concat("PBUF".getBytes(StandardCharsets.US_ASCII), chunk(20)),
    };
    for (byte[] content : files) {
      Path map = dir.resolve("bucketcache.map");
      Files.write(map, content);

      Run r = guard(map);

      assertThat(r.exit()).isZero();
      assertThat(map).as(r.output()).exists().hasBinaryContent(content);
      assertThat(r.terminationMessage()).isNull();
      assertThat(r.output()).contains("kept");
    }
  }

  /**
   * HBase writes "<map><milliseconds>" and renames it when written in full: one left over failed.
   */
  @Test
  void removesWhatAMapWriteThatDidNotFinishLeft() throws Exception {
    Path map = dir.resolve("bucketcache.map");
    byte[] good = chunkedMap(1, 1, chunk(7));
    Files.write(map, good);
    Files.write(dir.resolve("bucketcache.map1796161705782"), new byte[0]);
    Files.write(dir.resolve("bucketcache.map1796161705790"), chunkedMap(1, 1, new byte[3]));
    Files.write(dir.resolve("bucketcache.map.bak"), good);
    Files.write(dir.resolve("bucketcache.map17x"), good);

    Run r = guard(map);

    assertThat(r.output()).contains("removed " + dir.resolve("bucketcache.map1796161705782"));
    assertThat(dir.resolve("bucketcache.map1796161705782")).doesNotExist();
    assertThat(dir.resolve("bucketcache.map1796161705790")).doesNotExist();
    assertThat(dir.resolve("bucketcache.map.bak")).exists();
    assertThat(dir.resolve("bucketcache.map17x")).exists();
    assertThat(map).hasBinaryContent(good);
    assertThat(r.terminationMessage()).as("nothing to report").isNull();
  }

  @Test
  void aMissingMapIsNoError() throws Exception {
    Run r = guard(dir.resolve("absent.map"));
    assertThat(r.exit()).isZero();
    assertThat(r.terminationMessage()).isNull();
  }

  static final String HEAD =
      "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: p\n"
          + "  namespace: ns\nspec:\n  targetRef:\n    name: rs\n  hbaseSiteConfigMap: hbase-site\n";

  static Plan plan(String body) {
    PlanResult r = PlanCommand.plan(HEAD + body, Sizes.parse("8Gi"), null);
    assertThat(r).isInstanceOf(Plan.class);
    return (Plan) r;
  }

  static final Container RS =
      new ContainerBuilder()
          .withName("regionserver")
          .withImage("example.org/hbase:2.6.4")
          .withImagePullPolicy("IfNotPresent")
          .withNewSecurityContext()
          .withRunAsUser(1000L)
          .withRunAsNonRoot(true)
          .endSecurityContext()
          .build();

  @Test
  void runsInTheRegionServersImageAndUserWithTheCacheVolumeForPersistentFileOnly() {
    Plan persistent = plan("  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n");
    Container c = PodHooks.cacheMapGuard(persistent, RS).orElseThrow();
    assertThat(c.getImage()).isEqualTo(RS.getImage());
    assertThat(c.getImagePullPolicy()).isEqualTo("IfNotPresent");
    assertThat(c.getSecurityContext()).isEqualTo(RS.getSecurityContext());
    assertThat(c.getCommand())
        .containsExactly(
            "sh",
            "-c",
            PodHooks.CACHE_MAP_GUARD_SCRIPT,
            PodHooks.CACHE_MAP_GUARD,
            persistent.persistentPath());
    assertThat(c.getVolumeMounts())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getName()).isEqualTo(Desired.CACHE_VOLUME);
              assertThat(persistent.persistentPath()).startsWith(m.getMountPath() + "/");
            });
    assertThat(
            Desired.regionServerPatch(
                    Serialization.unmarshal(
                        HEAD + "  mode: PersistentFile\n", BlockCachePolicy.class),
                    persistent,
                    "rev",
                    RS,
                    "conf")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getInitContainers())
        .containsExactly(c);

    assertThat(PodHooks.cacheMapGuard(plan("  mode: File\n  memory:\n    bucketCache: 2Gi\n"), RS))
        .as("File: no persistence map")
        .isEmpty();
    assertThat(PodHooks.cacheMapGuard(plan("  mode: Lru\n"), RS)).isEmpty();
  }

  static io.fabric8.kubernetes.api.model.Container rendered(Plan plan, Container regionServer) {
    return Desired.regionServerPatch(
            Serialization.unmarshal(HEAD + "  mode: PersistentFile\n", BlockCachePolicy.class),
            plan,
            "rev",
            regionServer,
            "conf")
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0);
  }

  /**
   * A restart of the container in its pod runs no init container: the guard runs again as its
   * postStart hook, writing to the container's own termination log.
   */
  @Test
  void runsAgainAtEachStartOfTheRegionServerContainer() {
    Plan persistent = plan("  mode: PersistentFile\n  memory:\n    bucketCache: 2Gi\n");
    var hook = rendered(persistent, RS).getLifecycle().getPostStart().getExec().getCommand();
    assertThat(hook)
        .containsExactly(
            "sh",
            "-c",
            PodHooks.CACHE_MAP_GUARD_SCRIPT,
            PodHooks.CACHE_MAP_GUARD,
            persistent.persistentPath(),
            "/dev/termination-log");
    assertThat(rendered(persistent, RS).getLifecycle().getPreStop())
        .as("beside the warm stop")
        .isNotNull();
    Container ownLog = new ContainerBuilder(RS).withTerminationMessagePath("/tmp/why").build();
    assertThat(rendered(persistent, ownLog).getLifecycle().getPostStart().getExec().getCommand())
        .endsWith("/tmp/why");
    Container ownHook =
        new ContainerBuilder(RS)
            .withNewLifecycle()
            .withNewPostStart()
            .withNewExec()
            .withCommand("/bin/register")
            .endExec()
            .endPostStart()
            .endLifecycle()
            .build();
    assertThat(rendered(persistent, ownHook).getLifecycle().getPostStart())
        .as("a postStart hook of the template's own is kept: the patch sets none")
        .isNull();
    Container applied =
        new ContainerBuilder(RS).withLifecycle(rendered(persistent, RS).getLifecycle()).build();
    assertThat(rendered(persistent, applied).getLifecycle().getPostStart())
        .as("the operator's own, from an earlier apply, is rendered again")
        .isEqualTo(rendered(persistent, RS).getLifecycle().getPostStart());
    assertThat(
            rendered(plan("  mode: File\n  memory:\n    bucketCache: 2Gi\n"), RS)
                .getLifecycle()
                .getPostStart())
        .as("File: no persistence map")
        .isNull();
  }
}
