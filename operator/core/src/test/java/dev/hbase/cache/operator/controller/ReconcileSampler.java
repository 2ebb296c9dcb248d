package dev.hbase.cache.operator.controller;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where the reconcile threads spend their wall time ({@link OperatorScaleBench} only): every {@code
 * periodMillis} the stacks of JOSDK's reconciler threads that are inside {@code reconcile()}, each
 * counted once under the innermost frame of the operator's own code and the outermost frame of a
 * library it called from there (an HTTP round trip to the API server, the status patch's wait for
 * its informer, a lock). A wall-clock profile, not a CPU one: a thread waiting on the API server
 * counts as much as one computing.
 */
final class ReconcileSampler implements AutoCloseable {
  private static final String RECONCILER_THREAD = "ReconcilerExecutor";
  private static final String OWN = "dev.hbase.cache.operator.";

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
  private final AtomicLong samples = new AtomicLong();

  /**
   * CPU time of each reconciler thread at its first and its last sample (ns): what a thread used
   * before its first sample or after its last one (JOSDK's executor replaces its threads) is not
   * counted, so the sum is a lower bound.
   */
  private final Map<Long, Long> cpuAtStart = new ConcurrentHashMap<>();

  private final Map<Long, Long> cpuNanos = new ConcurrentHashMap<>();
  private final Thread sampler;
  private volatile boolean stop;

  ReconcileSampler(long periodMillis) {
    sampler =
        new Thread(
            () -> {
              while (!stop) {
                sample();
                try {
                  Thread.sleep(periodMillis);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "reconcile-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  private void sample() {
    for (ThreadInfo t : threads.dumpAllThreads(false, false)) {
      if (t == null || !t.getThreadName().startsWith(RECONCILER_THREAD)) {
        continue;
      }
      long cpu = threads.getThreadCpuTime(t.getThreadId());
      if (cpu >= 0) {
        cpuAtStart.putIfAbsent(t.getThreadId(), cpu);
        cpuNanos.put(t.getThreadId(), cpu);
      }
      String where = where(t.getStackTrace());
      if (where != null) {
        counts.computeIfAbsent(where, k -> new AtomicLong()).incrementAndGet();
        samples.incrementAndGet();
      }
    }
  }

  /**
   * "OwnClass.method -> library frame" for a thread inside the reconciler, null for an idle one.
   * The library frame is the outermost one below the innermost own frame: what the operator called.
   */
  static String where(StackTraceElement[] stack) {
    int own = -1;
    for (int i = 0; i < stack.length; i++) {
      if (stack[i].getClassName().startsWith(OWN)) {
        own = i;
        break;
      }
    }
    if (own < 0) {
      return null; // parked in the executor's queue, or JOSDK's own bookkeeping
    }
    String caller = shortName(stack[own]);
    if (own == 0) {
      return caller + " (own code)";
    }
    // and where the thread is at the top: parked on a future (an HTTP answer), sleeping, running
    return caller + " -> " + shortName(stack[own - 1]) + " [" + shortName(stack[0]) + "]";
  }

  private static String shortName(StackTraceElement e) {
    String c = e.getClassName();
    return c.substring(c.lastIndexOf('.') + 1) + "." + e.getMethodName();
  }

  /**
   * The sampled places, most seen first, as shares of all samples of busy reconcile threads, and
   * the CPU the reconciler threads used meanwhile per reconcile, at least (their own work:
   * planning, the roller, serialization, the client's side of each request).
   */
  Map<String, Object> report(int top, long reconciles) {
    Map<String, Object> out = new LinkedHashMap<>();
    long n = samples.get();
    long cpu = 0;
    for (var e : cpuNanos.entrySet()) {
      cpu += e.getValue() - cpuAtStart.getOrDefault(e.getKey(), e.getValue());
    }
    out.put(
        "cpuMsPerReconcile", reconciles <= 0 ? null : Math.round(cpu / 1e4 / reconciles) / 100.0);
    out.put("busyThreadSamples", n);
    Map<String, Double> places = new LinkedHashMap<>();
    counts.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue().get(), a.getValue().get()))
        .limit(top)
        .forEach(e -> places.put(e.getKey(), Math.round(1000.0 * e.getValue().get() / n) / 10.0));
    out.put("percentByPlace", places);
    return out;
  }

  @Override
  public void close() {
    stop = true;
    sampler.interrupt();
  }
}
