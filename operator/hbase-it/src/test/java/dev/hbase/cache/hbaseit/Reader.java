package dev.hbase.cache.hbaseit;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * A client reading random rows of the whole table at a fixed rate, the way a user's application
 * does during a roll. Latency is measured from each read's scheduled time (a read held up by a slow
 * one counts its wait too). Bounded: it stops by itself after {@code maxDuration}.
 */
final class Reader implements AutoCloseable {

  /** One read: when it was due (epoch ms), how long it took (µs), whether it failed. */
  record Read(long dueMillis, long micros, boolean failed, String error) {}

  // appended from every thread; read through snapshot() (a copy-on-write list copies per read:
  // quadratic at thousands of reads per second)
  private final List<Read> reads = java.util.Collections.synchronizedList(new ArrayList<>());
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stop;

  /**
   * @param perSecond reads per second in all (split over {@code threads} threads)
   */
  Reader(
      Connection connection,
      TestTable table,
      int perSecond,
      int threadCount,
      Duration maxDuration) {
    Instant end = Instant.now().plus(maxDuration);
    long periodNanos = 1_000_000_000L * threadCount / perSecond;
    for (int t = 0; t < threadCount; t++) {
      long seed = 1000 + t;
      Thread th =
          new Thread(
              () -> {
                Random random = new Random(seed);
                try (Table tab = connection.getTable(table.name)) {
                  long next = System.nanoTime();
                  while (!stop && Instant.now().isBefore(end)) {
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                      Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    long dueMillis =
                        System.currentTimeMillis() + (next - System.nanoTime()) / 1_000_000;
                    String row = TestTable.row(random.nextInt(table.rows));
                    String error = null;
                    try {
                      Result r = tab.get(new Get(Bytes.toBytes(row)));
                      if (r.isEmpty()) {
                        error = "row " + row + " missing";
                      }
                    } catch (IOException e) {
                      error = e.toString();
                    }
                    long micros = (System.nanoTime() - next) / 1000;
                    reads.add(new Read(dueMillis, micros, error != null, error));
                    next += periodNanos;
                  }
                } catch (IOException e) {
                  reads.add(new Read(System.currentTimeMillis(), 0, true, e.toString()));
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "reader-" + t);
      th.setDaemon(true);
      threads.add(th);
      th.start();
    }
  }

  private List<Read> snapshot() {
    synchronized (reads) {
      return new ArrayList<>(reads);
    }
  }

  /**
   * Second by second from {@code from}: {reads completed in it, p50 ms and p99 ms of the reads due
   * in it, reads due in it that failed}.
   */
  List<double[]> perSecond(Instant from, int seconds) {
    long[] completed = new long[seconds];
    long[] failed = new long[seconds];
    List<List<Long>> micros = new ArrayList<>();
    for (int i = 0; i < seconds; i++) {
      micros.add(new ArrayList<>());
    }
    for (Read r : snapshot()) {
      long due = r.dueMillis() - from.toEpochMilli();
      int done = (int) Math.floorDiv(due + r.micros() / 1000, 1000L);
      if (done >= 0 && done < seconds) {
        completed[done]++;
      }
      int d = (int) Math.floorDiv(due, 1000L);
      if (d >= 0 && d < seconds) {
        micros.get(d).add(r.micros());
        failed[d] += r.failed() ? 1 : 0;
      }
    }
    List<double[]> out = new ArrayList<>();
    for (int i = 0; i < seconds; i++) {
      long[] m = micros.get(i).stream().mapToLong(Long::longValue).sorted().toArray();
      out.add(
          new double[] {
            completed[i], percentile(m, 0.5) / 1000.0, percentile(m, 0.99) / 1000.0, failed[i]
          });
    }
    return out;
  }

  /** Seconds in [from, to) whose p99 was above {@code micros}: "time reads p99 max slow". */
  List<String> slowSeconds(Instant from, Instant to, long micros) {
    Map<Long, List<Read>> bySecond = new TreeMap<>();
    snapshot().stream()
        .filter(r -> r.dueMillis() >= from.toEpochMilli() && r.dueMillis() < to.toEpochMilli())
        .forEach(
            r -> bySecond.computeIfAbsent(r.dueMillis() / 1000, k -> new ArrayList<>()).add(r));
    List<String> out = new ArrayList<>();
    bySecond.forEach(
        (sec, rs) -> {
          long[] m = rs.stream().mapToLong(Read::micros).sorted().toArray();
          long p99 = percentile(m, 0.99);
          if (p99 > micros) {
            out.add(
                String.format(
                    Locale.ROOT,
                    "%s %d reads, p99 %.0f ms, max %.0f ms, %d over 100 ms",
                    Instant.ofEpochSecond(sec),
                    m.length,
                    p99 / 1000.0,
                    m[m.length - 1] / 1000.0,
                    rs.stream().filter(r -> r.micros() > 100_000).count()));
          }
        });
    return out;
  }

  /** What the reads due in [from, to) saw. */
  Stats stats(Instant from, Instant to) {
    List<Read> in =
        snapshot().stream()
            .filter(r -> r.dueMillis() >= from.toEpochMilli() && r.dueMillis() < to.toEpochMilli())
            .toList();
    long[] micros = in.stream().mapToLong(Read::micros).sorted().toArray();
    Map<Long, List<Long>> bySecond = new TreeMap<>();
    in.forEach(
        r ->
            bySecond.computeIfAbsent(r.dueMillis() / 1000, k -> new ArrayList<>()).add(r.micros()));
    long worstSecondP99 = 0;
    long worstSecond = 0;
    int secondsOver200 = 0;
    for (Map.Entry<Long, List<Long>> e : bySecond.entrySet()) {
      long[] s = e.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
      long p99 = percentile(s, 0.99);
      if (p99 > worstSecondP99) {
        worstSecondP99 = p99;
        worstSecond = e.getKey();
      }
      if (p99 > 200_000) {
        secondsOver200++;
      }
    }
    return new Stats(
        in.size(),
        in.stream().filter(Read::failed).count(),
        in.stream().filter(r -> r.micros() > 100_000).count(),
        percentile(micros, 0.5),
        percentile(micros, 0.99),
        micros.length == 0 ? 0 : micros[micros.length - 1],
        worstSecondP99,
        Instant.ofEpochSecond(worstSecond),
        secondsOver200,
        in.stream().filter(Read::failed).map(Read::error).distinct().limit(5).toList());
  }

  /**
   * @param slow reads that took over 100 ms (a region move held them up, typically)
   * @param worstSecondP99Micros the highest per-second p99
   * @param secondsOverTarget seconds whose p99 was above 200 ms
   */
  record Stats(
      long reads,
      long failed,
      long slow,
      long p50Micros,
      long p99Micros,
      long maxMicros,
      long worstSecondP99Micros,
      Instant worstSecond,
      int secondsOverTarget,
      List<String> errors) {

    String summary() {
      return String.format(
          Locale.ROOT,
          "%d reads, %d failed, %d over 100 ms; p50 %.1f ms, p99 %.1f ms, max %.0f ms; worst second's"
              + " p99 %.0f ms (%s), %d s with p99 > 200 ms%s",
          reads,
          failed,
          slow,
          p50Micros / 1000.0,
          p99Micros / 1000.0,
          maxMicros / 1000.0,
          worstSecondP99Micros / 1000.0,
          worstSecond,
          secondsOverTarget,
          errors.isEmpty() ? "" : "; errors " + errors);
    }
  }

  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    int i = (int) Math.ceil(p * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }

  @Override
  public void close() {
    stop = true;
    for (Thread t : threads) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
