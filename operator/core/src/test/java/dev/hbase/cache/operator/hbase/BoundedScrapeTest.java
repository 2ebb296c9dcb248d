package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException;
import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException.Kind;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;

/**
 * Both scrapers against real sockets whose info server is hostile ({@link InfoPortServer}): one
 * that sends the headers of a 1 GB body and then trickles it holds a scrape no longer than its
 * deadline (twice the timeout: the JDK's HttpClient stops counting its request timeout once the
 * headers are in, JDK-8258397), many at once each end at theirs, and a body of gigabytes sent as
 * fast as the socket takes it is read no further than the cap. Bounds are several times the
 * deadline; measured on 2 cores: a trickled scrape ends 2.0 s after it starts with a 1 s timeout.
 */
class BoundedScrapeTest {
  static final Duration TIMEOUT = Duration.ofSeconds(1);

  /** A flood is read at the socket's pace: a longer deadline, so that the cap ends it first. */
  static final Duration FLOOD_TIMEOUT = Duration.ofSeconds(5);

  /** What a stalled scrape may take at most here: its deadline (2 s), and slack for the load. */
  static final Duration BOUND = Duration.ofSeconds(8);

  @Test
  void aHealthyChunkedAnswerIsRead() throws Exception {
    try (InfoPortServer s = InfoPortServer.healthy()) {
      CacheSample sample = new JmxScraper(FLOOD_TIMEOUT).scrape("127.0.0.1", s.port());
      assertThat(sample.serverName()).isNotBlank();
      assertThat(sample.l2CapacityBytes()).isPositive();
    }
  }

  /** The info port: the headers of a 1 GB body, then a byte every 2 s. */
  @Test
  void theHeadersOfAHugeBodyAreRefusedAtOnce() throws Exception {
    try (InfoPortServer s = InfoPortServer.trickling(1_000_000_000L, Duration.ofSeconds(2))) {
      long t0 = System.nanoTime();
      ScrapeException e = failure(TIMEOUT, s);
      assertThat(e.kind()).isEqualTo(Kind.TOO_LARGE);
      assertThat(e.stalled()).isTrue();
      assertThat(e.getMessage()).contains("answer of 1000000000 bytes declared");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(BOUND);
    }
  }

  /** No length declared, and the body trickled: the deadline ends it. */
  @Test
  void aTrickledBodyEndsTheScrapeAtItsDeadline() throws Exception {
    try (InfoPortServer s = InfoPortServer.trickling(null, Duration.ofMillis(300))) {
      long t0 = System.nanoTime();
      ScrapeException e = failure(TIMEOUT, s);
      assertThat(e.kind()).isEqualTo(Kind.STALLED);
      assertThat(e.getMessage()).contains("no whole answer within 2000 ms");
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      System.out.println("BOUNDED SCRAPE trickled plain: " + took.toMillis() + " ms");
      assertThat(took).isGreaterThanOrEqualTo(JmxScraper.deadline(TIMEOUT)).isLessThan(BOUND);
      assertThat(s.bodyBytes.get()).as("bytes trickled before the cut").isLessThan(20);
    }
  }

  /** Twelve trickled scrapes over TLS at once each end at their own deadline. */
  @Test
  void manyTrickledTlsScrapesEachEndAtTheirDeadline() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "bounded-" + System.nanoTime()));
    Path store = TestCertificates.selfSigned(dir, "rs", "dns:localhost,ip:127.0.0.1");
    String pem = TestCertificates.exportPem(dir, store, "rs");
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try (InfoPortServer s =
        InfoPortServer.trickling(null, Duration.ofMillis(400), serverContext(store))) {
      TlsJmxScraper scraper = JmxScraper.secured(TIMEOUT, pem, null);
      long t0 = System.nanoTime();
      List<CompletableFuture<Throwable>> all = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        all.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    scraper.scrape("127.0.0.1", "localhost", s.port());
                    return null;
                  } catch (Exception e) {
                    return e;
                  }
                },
                pool));
      }
      assertTimeoutPreemptively(
          Duration.ofSeconds(60),
          () -> CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).join());
      Duration took = Duration.ofNanos(System.nanoTime() - t0);
      System.out.println("BOUNDED SCRAPE 12 trickled TLS at once: " + took.toMillis() + " ms");
      assertThat(all)
          .allSatisfy(
              f ->
                  assertThat(f.join())
                      .isInstanceOfSatisfying(
                          ScrapeException.class,
                          e -> assertThat(e.kind()).isEqualTo(Kind.STALLED)));
      assertThat(took).isLessThan(BOUND);
    } finally {
      pool.shutdownNow();
    }
  }

  /** A declared 3 GB body is refused before a byte of it is read. */
  @Test
  void aDeclaredHugeBodyIsRefusedAtOnce() throws Exception {
    try (InfoPortServer s = InfoPortServer.flooding(3L << 30)) {
      assertThat(failure(FLOOD_TIMEOUT, s).kind()).isEqualTo(Kind.TOO_LARGE);
    }
  }

  /**
   * A body without a length, sent as fast as the socket takes it (valid JSON as far as it goes):
   * the scrape stops at the cap; what the server got out is the cap and the sockets' buffers, not
   * the gigabytes it would send.
   */
  @Test
  void aFloodIsReadNoFurtherThanTheCap() throws Exception {
    try (InfoPortServer s = InfoPortServer.flooding(null)) {
      long t0 = System.nanoTime();
      assertThat(failure(FLOOD_TIMEOUT, s).kind()).isEqualTo(Kind.TOO_LARGE);
      System.out.println(
          "BOUNDED SCRAPE flood refused after "
              + Duration.ofNanos(System.nanoTime() - t0).toMillis()
              + " ms");
      Thread.sleep(200);
      assertThat(s.bodyBytes.get())
          .as("body bytes the server wrote before the scraper hung up")
          .isLessThan(InfoGet.MAX_BODY + (32L << 20));
    }
  }

  /** The scrape's failure, within 30 s (before the fix these hung, or read gigabytes). */
  static ScrapeException failure(Duration timeout, InfoPortServer s) {
    return assertTimeoutPreemptively(
        Duration.ofSeconds(30),
        () -> {
          try {
            new JmxScraper(timeout).scrape("127.0.0.1", s.port());
          } catch (ScrapeException e) {
            return e;
          }
          throw new AssertionError("the scrape of a hostile info port succeeded");
        });
  }

  static SSLContext serverContext(Path store) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, TestCertificates.PASSWORD.toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, TestCertificates.PASSWORD.toCharArray());
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }
}
