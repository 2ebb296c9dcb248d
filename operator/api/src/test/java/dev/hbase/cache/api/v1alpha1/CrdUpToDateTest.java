package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The build fails when crds/ (what users apply) differs from what the API classes generate. */
class CrdUpToDateTest {
  static final String FILE = "blockcachepolicies.cache.hbase.dev-v1.yml";

  @Test
  void committedCrdMatchesGeneratedCrd() throws Exception {
    Path generated = Path.of(System.getProperty("generated.crds.dir"), FILE);
    Path committed = Path.of(System.getProperty("crds.dir"), FILE);
    assertThat(generated).exists();
    assertThat(committed).as("crds/%s is missing: run `make crds`", FILE).exists();
    assertThat(Files.readString(committed))
        .as("crds/%s is stale: run `make crds` and commit the result", FILE)
        .isEqualTo(Files.readString(generated));
  }
}
