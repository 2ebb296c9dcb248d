package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.logging.LogContext;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The threads that ask RegionServers' info servers, shared out fairly between tenants (a tenant is
 * a namespace: whoever can edit a policy there can also run the pods it scrapes):
 *
 * <ul>
 *   <li>{@value #THREADS} threads in all; a namespace's asks run on at most {@value #SHARE} of them
 *       at once, the rest of its asks wait in its own queue, so a namespace whose info servers hold
 *       every ask to its deadline holds its share and no more;
 *   <li>a free thread goes to the namespaces with asks waiting in turn (round robin), not to the
 *       one that queued the most;
 *   <li>at most one ask per pod at a time ({@link #ask}'s key): a second ask of a pod whose ask is
 *       still queued or running gets that one's answer.
 * </ul>
 *
 * Every ask ends: an info server's exchange has a deadline ({@code InfoGet}), so a thread comes
 * back at most a deadline after it was taken. Waiting for an answer is the caller's to bound
 * ({@link InfoAsker}); an ask it no longer waits for is {@link #drop dropped} while still queued.
 */
public final class ScrapePool implements AutoCloseable {
  /** Threads asking info servers, over all namespaces. */
  public static final int THREADS = 16;

  /** Of those, the most one namespace's asks hold at once. */
  public static final int SHARE = 4;

  /** An ask queued or running. */
  static final class Job<T> {
    final String tenant;
    final String key;
    final Supplier<T> work;
    final CompletableFuture<T> answer = new CompletableFuture<>();
    volatile boolean started;
    volatile long startedAt; // System.nanoTime()

    Job(String tenant, String key, Supplier<T> work) {
      this.tenant = tenant;
      this.key = key;
      this.work = work;
    }

    /** Whether a thread has taken it (false: still in its namespace's queue). */
    boolean started() {
      return started;
    }

    /** How long it has run, in ns (0: not started). */
    long runningNanos() {
      return started ? System.nanoTime() - startedAt : 0;
    }

    CompletableFuture<T> answer() {
      return answer;
    }
  }

  private final ExecutorService threads;
  private final Map<String, ArrayDeque<Job<?>>> queued = new HashMap<>();
  private final Map<String, Integer> running = new HashMap<>();
  private final Map<String, Job<?>> byKey = new HashMap<>();

  /** Namespaces with asks queued, in the order their turn comes. */
  private final ArrayDeque<String> turns = new ArrayDeque<>();

  private int busy;
  private final int threadCount;
  private final int share;

  public ScrapePool() {
    this(THREADS, SHARE);
  }

  ScrapePool(int threadCount, int share) {
    this.threadCount = threadCount;
    this.share = share;
    AtomicInteger n = new AtomicInteger();
    this.threads =
        Executors.newFixedThreadPool(
            threadCount,
            r -> {
              Thread t = new Thread(r, "jmx-scrape-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Asks {@code work} of {@code tenant}'s share, or joins the ask of {@code key} (a pod) already
   * queued or running. The work must not throw (its failures are its answer) and must end (its
   * calls bounded).
   */
  @SuppressWarnings("unchecked")
  <T> Job<T> ask(String tenant, String key, Supplier<T> work) {
    synchronized (this) {
      Job<?> same = byKey.get(key);
      if (same != null) {
        return (Job<T>) same;
      }
      Job<T> job = new Job<>(tenant, key, LogContext.carry(work));
      byKey.put(key, job);
      ArrayDeque<Job<?>> q = queued.computeIfAbsent(tenant, t -> new ArrayDeque<>());
      if (q.isEmpty()) {
        turns.add(tenant);
      }
      q.add(job);
      dispatch();
      return job;
    }
  }

  /**
   * Takes a queued ask off its queue (nobody waits for it any more): its answer is cancelled. One
   * that runs goes on to its end (its exchange's deadline).
   */
  synchronized void drop(Job<?> job) {
    ArrayDeque<Job<?>> q = queued.get(job.tenant);
    if (!job.started && q != null && q.remove(job)) {
      byKey.remove(job.key, job);
      if (q.isEmpty()) {
        queued.remove(job.tenant);
        turns.remove(job.tenant);
      }
      job.answer.cancel(false);
    }
  }

  /** Asks of {@code tenant} running now (tests, metrics). */
  synchronized int running(String tenant) {
    return running.getOrDefault(tenant, 0);
  }

  /** Starts queued asks while threads are free, one namespace's turn after the other's. */
  private void dispatch() {
    int passes = turns.size();
    while (busy < threadCount && passes > 0) {
      String tenant = turns.poll();
      if (running.getOrDefault(tenant, 0) >= share) {
        turns.add(tenant); // its share is taken: the next namespace's turn
        passes--;
        continue;
      }
      ArrayDeque<Job<?>> q = queued.get(tenant);
      Job<?> job = q.poll();
      if (q.isEmpty()) {
        queued.remove(tenant);
      } else {
        turns.add(tenant);
      }
      start(job);
      passes = turns.size();
    }
  }

  private <T> void start(Job<T> job) {
    job.startedAt = System.nanoTime();
    job.started = true;
    busy++;
    running.merge(job.tenant, 1, Integer::sum);
    threads.execute(
        () -> {
          T result = null;
          RuntimeException failed = null;
          try {
            result = job.work.get();
          } catch (RuntimeException e) {
            failed = e;
          } finally {
            synchronized (this) {
              busy--;
              running.merge(job.tenant, -1, (a, b) -> a + b == 0 ? null : a + b);
              byKey.remove(job.key, job);
              dispatch();
            }
          }
          if (failed != null) {
            job.answer.completeExceptionally(failed);
          } else {
            job.answer.complete(result);
          }
        });
  }

  /** Stops the threads (operator shutdown). */
  @Override
  public void close() {
    threads.shutdownNow();
  }
}
