package dev.hbase.cache.operator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.InfoPortServer;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A reconcile's asks of its info servers: within its budget, stalled servers remembered. */
class InfoAskerTest {
  final SimulatedHBase hbase = new SimulatedHBase(Instant::now);
  final InfoAsker asker = new InfoAsker(new ScrapePool());
  final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void close() {
    release.countDown();
    asker.close();
  }

  static PodView pod(String name, String ip) {
    return new PodView(name, "uid-" + name, 0, "rev", true, false, null, ip, false, false);
  }

  @Test
  void theWaitEndsWithTheBudgetAndTheStalledServerIsNamedAndLeftAlone() throws Exception {
    hbase.register("rs-0", "rs-0.rs", "10.0.0.10", List.of("r0"));
    AtomicInteger asksOfTheStalled = new AtomicInteger();
    CacheProbe probe =
        (host, port) -> {
          if (host.equals("10.0.0.11")) {
            asksOfTheStalled.incrementAndGet();
            try {
              release.await(); // an info server that never answers
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            throw new IOException("released");
          }
          return hbase.probe().scrape(host, port);
        };
    List<PodView> pods = List.of(pod("rs-0", "10.0.0.10"), pod("rs-1", "10.0.0.11"));
    InfoServers info =
        InfoServers.byIp(probe, 16030).within(new ScrapeBudget("team-a", Duration.ofSeconds(1)));
    long t0 = System.nanoTime();
    Map<String, InfoAsker.Answer> answers = asker.ask(info, pods, false);
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(took)
        .isGreaterThanOrEqualTo(Duration.ofMillis(900))
        .isLessThan(Duration.ofSeconds(5));
    assertThat(answers.get("rs-0").sample()).isNotNull();
    assertThat(answers.get("rs-1").sample()).isNull();
    assertThat(InfoAsker.message(asker.stalls(info, pods)))
        .isEqualTo(
            "an info server holds the operator's asks or answer more than it reads, their figures"
                + " are missing: rs-1 (10.0.0.11:16030): no answer within the reconcile's 1 s");

    // the budget is the reconcile's, spent: a second ask in it does not wait
    t0 = System.nanoTime();
    asker.ask(info, pods, false);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(500));

    // the next reconcile does not ask the stalled server again for a while, and does not wait
    InfoServers next =
        InfoServers.byIp(probe, 16030).within(new ScrapeBudget("team-a", Duration.ofSeconds(1)));
    t0 = System.nanoTime();
    answers = asker.ask(next, pods, false);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(500));
    assertThat(answers.get("rs-0").sample()).isNotNull();
    assertThat(asksOfTheStalled.get()).isEqualTo(1);
    assertThat(asker.stalls(next, pods)).extracting(InfoAsker.Stall::pod).containsExactly("rs-1");
  }

  @Test
  void aServerThatAnswersAgainIsNoLongerStalled() throws Exception {
    hbase.register("rs-0", "rs-0.rs", "10.0.0.10", List.of("r0"));
    AtomicInteger calls = new AtomicInteger();
    try (var trickling = InfoPortServer.trickling(null, Duration.ofMillis(100))) {
      var real = new JmxScraper(Duration.ofMillis(300));
      CacheProbe probe =
          new CacheProbe() {
            @Override
            public CacheSample scrape(String host, int port) throws IOException {
              if (calls.incrementAndGet() == 1) {
                return real.scrape("127.0.0.1", trickling.port()); // held to its deadline
              }
              return hbase.probe().scrape(host, port);
            }
          };
      check(probe);
    }
  }

  private void check(CacheProbe probe) {
    List<PodView> pods = List.of(pod("rs-0", "10.0.0.10"));
    InfoServers info = InfoServers.byIp(probe, 16030);
    asker.ask(info, pods, false);
    assertThat(asker.stalls(info, pods)).hasSize(1);
    assertThat(asker.stalls(info, pods).get(0).why()).isEqualTo("no whole answer within 600 ms");
    // a restarted pod (another uid) is asked at once, and answers
    List<PodView> restarted =
        List.of(
            new PodView("rs-0", "uid-new", 0, "rev", true, false, null, "10.0.0.10", false, false));
    assertThat(asker.ask(info, restarted, false).get("rs-0").sample()).isNotNull();
    assertThat(asker.stalls(info, restarted)).isEmpty();
  }
}
