package dev.hbase.cache.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What else ran on this machine while a step ran, for the step table of the report: the suite's
 * figures (seconds per pod, p99s) are measured on the same cores. {@code .ci/run} starts the suite
 * beside make test, make test-hbase and make publish-check and keeps a file per running part in
 * {@code E2E_BESIDE_DIR}; every 5 s this reads that directory and the 1-minute load average ({@code
 * /proc/loadavg}). Without {@code E2E_BESIDE_DIR} (make e2e alone) only the load is shown. A
 * figure, never asserted.
 */
final class Beside implements AutoCloseable {
  private record Sample(Instant at, Set<String> parts, double load) {}

  private final Path dir;
  private final List<Sample> samples = new ArrayList<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "beside");
            t.setDaemon(true);
            return t;
          });

  Beside(String dir) {
    this.dir = dir == null || dir.isBlank() ? null : Path.of(dir);
    timer.scheduleAtFixedRate(this::sample, 0, 5, TimeUnit.SECONDS);
  }

  static Beside fromEnvironment() {
    return new Beside(System.getenv("E2E_BESIDE_DIR"));
  }

  /**
   * The parts seen running from {@code from} until now (a sample taken now included), or "-" for
   * none, and the highest 1-minute load average among those samples, e.g. "make test-hbase; load
   * 3.4".
   */
  String since(Instant from) {
    sample();
    Set<String> parts = new TreeSet<>();
    double load = 0;
    synchronized (samples) {
      for (Sample s : samples) {
        if (!s.at().isBefore(from)) {
          parts.addAll(s.parts());
          load = Math.max(load, s.load());
        }
      }
    }
    return String.format(
        Locale.ROOT, "%s; load %.1f", parts.isEmpty() ? "-" : String.join(", ", parts), load);
  }

  private void sample() {
    Sample s = new Sample(Instant.now(), parts(), load());
    synchronized (samples) {
      samples.add(s);
    }
  }

  private Set<String> parts() {
    if (dir == null || !Files.isDirectory(dir)) {
      return Set.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> !n.startsWith("."))
          .collect(Collectors.toCollection(TreeSet::new));
    } catch (IOException e) {
      return Set.of("(unread: " + e.getMessage() + ")");
    }
  }

  private static double load() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
