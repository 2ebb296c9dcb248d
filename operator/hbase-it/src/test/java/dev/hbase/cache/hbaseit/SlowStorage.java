package dev.hbase.cache.hbaseit;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A directory whose files cost what a remote store's do to read: {@code bin/slowfs} (a FUSE
 * loopback, {@code operator/hbase-it/bench/slowfs}) mounts {@code backing} on {@code mount} and
 * makes every read of a file opened read-only wait a fixed latency, with no page cache in between.
 * Needs root and {@code /dev/fuse}. Benchmarks only.
 */
final class SlowStorage implements AutoCloseable {

  static final Path SLOWFS = Path.of(System.getProperty("bench.slowfs", "../../bin/slowfs"));

  final Path mount;
  final Duration latency;
  private final Process process;

  private SlowStorage(Path mount, Duration latency, Process process) {
    this.mount = mount;
    this.latency = latency;
    this.process = process;
  }

  /** Mounts a new slow directory under {@code dir} (backing files in {@code dir/backing}). */
  static SlowStorage mount(Path dir, Duration latency) throws IOException, InterruptedException {
    if (!Files.isExecutable(SLOWFS)) {
      throw new IllegalStateException(SLOWFS.toAbsolutePath() + " missing: run `make slowfs`");
    }
    Path backing = Files.createDirectories(dir.resolve("backing")).toAbsolutePath();
    Path mount = Files.createDirectories(dir.resolve("mnt")).toAbsolutePath();
    Process p =
        new ProcessBuilder(
                SLOWFS.toAbsolutePath().toString(),
                "-latency",
                latency.toMillis() + "ms",
                backing.toString(),
                mount.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("slowfs.log").toFile())
            .start();
    Instant deadline = Instant.now().plusSeconds(20);
    while (!mounted(mount)) {
      if (!p.isAlive() || Instant.now().isAfter(deadline)) {
        p.destroy();
        throw new IllegalStateException(
            "slowfs did not mount "
                + mount
                + " (root and /dev/fuse needed): "
                + Files.readString(dir.resolve("slowfs.log")));
      }
      Thread.sleep(100);
    }
    return new SlowStorage(mount, latency, p);
  }

  private static boolean mounted(Path mount) throws IOException {
    return Files.readAllLines(Path.of("/proc/mounts")).stream()
        .anyMatch(l -> l.contains(" " + mount + " fuse.slowfs "));
  }

  /**
   * What the storage costs, measured through the mount: random reads of HBase's block size from
   * {@code threads} threads for {@code duration} over a file written for it.
   */
  Map<String, Object> measure(int threads, Duration duration) throws Exception {
    int block = 64 << 10;
    long size = 64L << 20;
    Path f = mount.resolve("probe.bin");
    byte[] chunk = new byte[1 << 20];
    try (var out = Files.newOutputStream(f)) {
      for (long w = 0; w < size; w += chunk.length) {
        ThreadLocalRandom.current().nextBytes(chunk);
        out.write(chunk);
      }
    }
    List<long[]> perThread = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long end = System.nanoTime() + duration.toNanos();
    try {
      List<Future<long[]>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(
            pool.submit(
                () -> {
                  long[] micros = new long[1 << 16];
                  int n = 0;
                  ByteBuffer buf = ByteBuffer.allocate(block);
                  try (FileChannel ch = new RandomAccessFile(f.toFile(), "r").getChannel()) {
                    while (System.nanoTime() < end && n < micros.length) {
                      long at = ThreadLocalRandom.current().nextLong(size / block) * block;
                      buf.clear();
                      long t0 = System.nanoTime();
                      ch.read(buf, at);
                      micros[n++] = (System.nanoTime() - t0) / 1000;
                    }
                  }
                  return java.util.Arrays.copyOf(micros, n);
                }));
      }
      for (Future<long[]> fu : futures) {
        perThread.add(fu.get());
      }
    } finally {
      pool.shutdownNow();
      Files.deleteIfExists(f);
    }
    long[] all = perThread.stream().flatMapToLong(java.util.Arrays::stream).sorted().toArray();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("latencyConfiguredMillis", latency.toMillis());
    m.put("probeThreads", threads);
    m.put("probeReadBytes", block);
    m.put("readsPerSecond", all.length / (double) duration.toSeconds());
    m.put("megabytesPerSecond", all.length * (double) block / duration.toSeconds() / (1 << 20));
    m.put("readP50Millis", Reader.percentile(all, 0.5) / 1000.0);
    m.put("readP99Millis", Reader.percentile(all, 0.99) / 1000.0);
    return m;
  }

  @Override
  public void close() throws Exception {
    new ProcessBuilder("umount", mount.toString())
        .inheritIO()
        .start()
        .waitFor(30, TimeUnit.SECONDS);
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
