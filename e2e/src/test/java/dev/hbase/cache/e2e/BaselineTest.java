package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * What the suite's policy precondition ({@link Needs#suitePolicy}) compares: the spec the suite
 * created, but for tuning.writerThreads ({@link Baseline#differences}). No cluster.
 */
@Order(0)
class BaselineTest {
  static BlockCachePolicySpec example() {
    Path repo = Path.of(System.getProperty("e2e.repo", "..")).toAbsolutePath().normalize();
    try {
      return Serialization.unmarshal(
              Files.readString(repo.resolve("examples/persistent-file.yaml")),
              BlockCachePolicy.class)
          .getSpec();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void onlyWriterThreadsChangedIsNoDifference() {
    BlockCachePolicySpec now = Serialization.clone(example());
    now.getTuning().setWriterThreads(9);
    assertThat(Baseline.differences(example(), now)).isEmpty();
  }

  @Test
  void aChangedOrAddedFieldIsNamed() {
    BlockCachePolicySpec now = Serialization.clone(example());
    now.getMemory().setBucketCache(new Quantity("64Gi"));
    now.setJvm(new JvmSpec().setExtraOptions(List.of("-Xss1k")));
    assertThat(Baseline.differences(example(), now))
        .hasSize(2)
        .anyMatch(d -> d.startsWith("memory ") && d.contains("64Gi"))
        .anyMatch(d -> d.startsWith("jvm ") && d.endsWith("(the suite's: none)"));
  }

  @Test
  void aRemovedFieldIsNamed() {
    BlockCachePolicySpec now = Serialization.clone(example());
    now.setTuning(null);
    assertThat(Baseline.differences(example(), now))
        .singleElement()
        .asString()
        .startsWith("tuning null");
  }

  @Test
  void writerThreadsAvoidsTheValuesTheStepsRollToAndTheCurrentOne() {
    assertThat(Needs.unused(java.util.Set.of(5, 6, 7), 8)).isEqualTo(9);
    assertThat(Needs.unused(java.util.Set.of(), 5)).isEqualTo(6);
  }
}
