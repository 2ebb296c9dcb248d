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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache-map-guard init container: its script run by the real {@code sh} on files laid out as
 * HBase 2.6.4 writes them (BucketProtoUtils.serializeAsPB: "V2UF", chunk size, number of chunks,
 * chunks; checked against real HBase by hbase-it's PersistenceIT), and where it is rendered.
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
            "sh", "-c", Desired.CACHE_MAP_GUARD_SCRIPT, Desired.CACHE_MAP_GUARD, map.toString());
    pb.environment().put("TERMINATION_LOG", log.toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), out, Files.exists(log) ? Files.readString(log).strip() : null);
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
        .contains("removed the empty BucketCache persistence map " + map)
        .contains("HBASE-29857");
  }

  @Test
  void leavesEveryOtherFileAsItIs() throws Exception {
    byte[][] files = {
      // a map with one chunk (entries)
      chunkedMap(10_000, 1, new byte[] {3, 8, 1, 2}),
      // 20 bytes claiming a chunk: truncated, but not ours to judge
      chunkedMap(10_000, 1, new byte[0]),
      // 0 chunks but more bytes follow: not the file an empty cache writes
      chunkedMap(10_000, 0, new byte[] {0}),
      // the old format (protobuf magic "PBUF"), any size
      "PBUF0000000000000000".getBytes(StandardCharsets.US_ASCII),
      // too short to be a map
      "V2UF".getBytes(StandardCharsets.US_ASCII),
      new byte[0],
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
    Container c = Desired.cacheMapGuard(persistent, RS).orElseThrow();
    assertThat(c.getImage()).isEqualTo(RS.getImage());
    assertThat(c.getImagePullPolicy()).isEqualTo("IfNotPresent");
    assertThat(c.getSecurityContext()).isEqualTo(RS.getSecurityContext());
    assertThat(c.getCommand())
        .containsExactly(
            "sh",
            "-c",
            Desired.CACHE_MAP_GUARD_SCRIPT,
            Desired.CACHE_MAP_GUARD,
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

    assertThat(Desired.cacheMapGuard(plan("  mode: File\n  memory:\n    bucketCache: 2Gi\n"), RS))
        .as("File: no persistence map")
        .isEmpty();
    assertThat(Desired.cacheMapGuard(plan("  mode: Lru\n"), RS)).isEmpty();
  }
}
