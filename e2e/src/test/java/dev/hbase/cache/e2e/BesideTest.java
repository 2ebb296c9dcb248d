package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The step table's "beside it" column: {@link Beside}. No cluster. */
@org.junit.jupiter.api.Order(0)
class BesideTest {
  @Test
  void aPartSeenDuringTheStepIsNamedEvenAfterItEnded(@TempDir Path dir) throws Exception {
    try (Beside beside = new Beside(dir.toString())) {
      Instant t0 = Instant.now();
      Files.createFile(dir.resolve("make test-hbase"));
      assertThat(beside.since(t0)).startsWith("make test-hbase; load ");
      Files.delete(dir.resolve("make test-hbase"));
      Files.createFile(dir.resolve("make publish-check"));
      assertThat(beside.since(t0)).startsWith("make publish-check, make test-hbase; load ");
      Files.delete(dir.resolve("make publish-check"));
      Instant later = Instant.now();
      assertThat(beside.since(later)).startsWith("-; load ");
    }
  }

  @Test
  void outsideCiNoPartIsNamed() {
    try (Beside beside = new Beside(null)) {
      assertThat(beside.since(Instant.now())).matches("-; load [0-9]+\\.[0-9]");
    }
  }
}
