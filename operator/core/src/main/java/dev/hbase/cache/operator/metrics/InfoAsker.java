package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks a policy's RegionServers' info servers, all at once, on the shared {@link ScrapePool} (its
 * namespace's share of it), and waits for the answers within the reconcile's {@link ScrapeBudget}.
 * What did not come in time is missing from the answers; the reconcile goes on without it.
 *
 * <p>A server that holds an ask to its deadline, or sends more than the operator reads, is
 * <em>stalled</em>: remembered (by pod uid and address) until it answers again, named in the
 * policy's Degraded condition ({@link #stalls}), and not asked again for {@link #ASK_AGAIN}, so
 * that a tenant whose info servers all stall costs its policy's reconciles one wait per {@link
 * #ASK_AGAIN}, not one per reconcile.
 */
public final class InfoAsker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InfoAsker.class);

  /** How long a stalled server is not asked again. */
  public static final Duration ASK_AGAIN = Duration.ofSeconds(30);

  /** Stalled servers remembered at most (pods gone meanwhile go first). */
  static final int KEPT = 4096;

  /**
   * One pod's answer: its cache sample and JVM GC total (null when not asked for or unknown), or
   * why there is none ({@code failure}; both null: not asked in time, or not asked again yet).
   */
  public record Answer(CacheSample sample, Long gcTotal, IOException failure) {
    static final Answer NONE = new Answer(null, null, null);
  }

  /** A stalled server: the pod, where it was asked, why, and when. */
  public record Stall(String pod, String address, String why, Instant at) {}

  private final ScrapePool pool;
  private final Clock clock;
  private final LongSupplier nanoTime;
  private final Map<String, Stall> stalled =
      Collections.synchronizedMap(
          new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Stall> eldest) {
              return size() > KEPT;
            }
          });

  public InfoAsker(ScrapePool pool) {
    this(pool, Clock.systemUTC(), System::nanoTime);
  }

  InfoAsker(ScrapePool pool, Clock clock, LongSupplier nanoTime) {
    this.pool = pool;
    this.clock = clock;
    this.nanoTime = nanoTime;
  }

  /**
   * Each pod's answer, by pod name: asked at once, waited for within the budget. {@code withGc}:
   * the JVM's GC total too, for the pods whose sample came.
   */
  public Map<String, Answer> ask(InfoServers info, List<PodView> pods, boolean withGc) {
    ScrapeBudget budget = info.budget() != null ? info.budget() : ScrapeBudget.of("");
    Instant now = clock.instant();
    Map<String, Answer> out = new HashMap<>();
    Map<PodView, ScrapePool.Job<Answer>> asked = new LinkedHashMap<>();
    if (budget.leftNanos() == 0) {
      // the reconcile spent its time for info servers already (an earlier step's asks stalled)
      pods.forEach(p -> out.put(p.name(), Answer.NONE));
      return out;
    }
    for (PodView p : pods) {
      Stall s = stalled.get(key(budget, info, p));
      if (s != null && s.at().plus(ASK_AGAIN).isAfter(now)) {
        out.put(p.name(), Answer.NONE); // stalled a moment ago: not asked again yet
        continue;
      }
      ScrapePool.Job<Answer> job =
          pool.ask(budget.tenant(), key(budget, info, p), () -> answer(info, p, withGc));
      // its outcome is remembered when it ends, also when no reconcile waits for it any more
      job.answer().thenAccept(a -> remember(budget, info, p, a));
      asked.put(p, job);
    }
    long t0 = nanoTime.getAsLong();
    try {
      for (var e : asked.entrySet()) {
        PodView p = e.getKey();
        ScrapePool.Job<Answer> job = e.getValue();
        long left = budget.leftNanos() - (nanoTime.getAsLong() - t0);
        Answer a;
        try {
          a = job.answer().get(Math.max(0, left), TimeUnit.NANOSECONDS);
          remember(budget, info, p, a); // at once too, for this reconcile's own report
        } catch (TimeoutException late) {
          a = Answer.NONE;
          if (job.runningNanos() >= budget.total().toNanos() / 2) {
            // it runs to its deadline without this reconcile; stalled until it answers (one
            // that started late, behind its namespace's share, is not judged on that little)
            stalled.put(
                key(budget, info, p),
                new Stall(
                    p.name(),
                    info.address(p),
                    "no answer within the reconcile's " + budget.total().toSeconds() + " s",
                    clock.instant()));
          } else if (!job.started()) {
            pool.drop(job); // its namespace's share was busy all along: asked again next time
          }
        } catch (CancellationException | ExecutionException dropped) {
          a = Answer.NONE;
        } catch (InterruptedException stop) {
          Thread.currentThread().interrupt();
          a = Answer.NONE;
        }
        out.put(p.name(), a);
      }
    } finally {
      budget.spent(nanoTime.getAsLong() - t0);
    }
    return out;
  }

  /** One pod's ask, on a pool thread: its sample, then (when asked for) its GC total. */
  private static Answer answer(InfoServers info, PodView p, boolean withGc) {
    CacheSample s;
    try {
      s = info.scrape(p);
    } catch (IOException e) {
      log.debug("scrape of {} failed: {}", p.name(), e.toString());
      return new Answer(null, null, e);
    } catch (RuntimeException e) {
      log.debug("scrape of {} failed: {}", p.name(), e.toString());
      return new Answer(null, null, new IOException(e.toString(), e));
    }
    Long gc = null;
    if (withGc) {
      try {
        gc = info.gcTimeMillis(p);
      } catch (IOException | RuntimeException e) {
        log.debug("GC time of {} not read: {}", p.name(), e.toString());
      }
    }
    return new Answer(s, gc, null);
  }

  private void remember(ScrapeBudget budget, InfoServers info, PodView p, Answer a) {
    String key = key(budget, info, p);
    if (a.failure() instanceof ScrapeException e && e.stalled()) {
      stalled.put(key, new Stall(p.name(), info.address(p), why(e), clock.instant()));
    } else {
      stalled.remove(key); // it answered, or failed otherwise (refused: a server starting)
    }
  }

  /** The scrape's reason without its URL (the pod and address are named beside it). */
  private static String why(ScrapeException e) {
    String m = String.valueOf(e.getMessage());
    int colon = m.indexOf(": ", "scraping ".length());
    return m.startsWith("scraping ") && colon > 0 ? m.substring(colon + 2) : m;
  }

  /**
   * The given pods' servers that are stalled now (the last ask of each held it to its deadline,
   * sent too much, or did not answer within a reconcile's budget), in the pods' order.
   */
  public List<Stall> stalls(InfoServers info, List<PodView> pods) {
    ScrapeBudget budget = info.budget() != null ? info.budget() : ScrapeBudget.of("");
    List<Stall> out = new ArrayList<>();
    for (PodView p : pods) {
      if (p.ip() != null) {
        Stall s = stalled.get(key(budget, info, p));
        if (s != null) {
          out.add(s);
        }
      }
    }
    return out;
  }

  /** The most stalled servers a message names (the rest counted). */
  static final int NAMED = 5;

  /** The Degraded message for these stalls; null for none. */
  public static String message(List<Stall> stalls) {
    if (stalls.isEmpty()) {
      return null;
    }
    String named =
        stalls.stream()
            .limit(NAMED)
            .map(s -> s.pod() + " (" + s.address() + "): " + s.why())
            .collect(Collectors.joining("; "));
    int more = stalls.size() - NAMED;
    return (stalls.size() == 1 ? "an info server holds" : stalls.size() + " info servers hold")
        + " the operator's asks or answer more than it reads, their figures are missing: "
        + named
        + (more > 0 ? "; and " + more + " more" : "");
  }

  /** One pod's server, as the pool and the memory of stalls know it. */
  private static String key(ScrapeBudget budget, InfoServers info, PodView p) {
    return budget.tenant() + "/" + p.name() + "|" + p.uid() + "|" + info.address(p);
  }

  @Override
  public void close() {
    pool.close();
  }
}
