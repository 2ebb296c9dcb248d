package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How a server's certificate names are matched, and what a CA text must hold. */
class TlsJmxScraperTest {
  @Test
  void aNameMatchesItselfOrAWildcardForItsFirstLabelOnly() {
    String pod = "rs-0.rs.team-a.svc.cluster.local";
    assertThat(TlsJmxScraper.matches(pod, pod)).isTrue();
    assertThat(TlsJmxScraper.matches("*.rs.team-a.svc.cluster.local", pod)).isTrue();
    assertThat(TlsJmxScraper.matches("*.team-a.svc.cluster.local", pod)).isFalse();
    assertThat(TlsJmxScraper.matches("*.rs.team-b.svc.cluster.local", pod)).isFalse();
    assertThat(TlsJmxScraper.matches("rs-1.rs.team-a.svc.cluster.local", pod)).isFalse();
    assertThat(
            TlsJmxScraper.matches("*.rs.team-a.svc.cluster.local", ".rs.team-a.svc.cluster.local"))
        .isFalse();
  }

  /** A plain HTTP server where TLS was asked for is NOT_TLS (a refusal), none at all OTHER. */
  @Test
  void aServerThatDoesNotSpeakTlsIsToldFromOneThatDoesNotAnswer() throws Exception {
    java.nio.file.Path dir =
        java.nio.file.Files.createDirectories(
            java.nio.file.Path.of("target", "tls-unit-" + System.nanoTime()));
    String pem =
        TestCertificates.exportPem(
            dir, TestCertificates.selfSigned(dir, "ca", "dns:localhost"), "ca");
    // an HTTP server's answer to a TLS hello, as Jetty gives it on a plain port: a 400, then close
    var plain = new java.net.ServerSocket(0, 5, java.net.InetAddress.getLoopbackAddress());
    Thread answering =
        new Thread(
            () -> {
              while (!plain.isClosed()) {
                try (var x = plain.accept()) {
                  x.getInputStream().read(new byte[512]);
                  x.getOutputStream()
                      .write(
                          ("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                  + "Connection: close\r\n\r\n")
                              .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                } catch (java.io.IOException e) {
                  // closed: the test is over
                }
              }
            });
    answering.setDaemon(true);
    answering.start();
    try {
      TlsJmxScraper s = JmxScraper.secured(Duration.ofSeconds(2), pem, null);
      assertThatThrownBy(() -> s.scrape("127.0.0.1", "localhost", plain.getLocalPort()))
          .isInstanceOfSatisfying(
              JmxScraper.ScrapeException.class,
              e ->
                  assertThat(e.kind())
                      .as(e.getMessage() + " / " + e.getCause())
                      .isEqualTo(JmxScraper.ScrapeException.Kind.NOT_TLS));
      int closed;
      try (var probe = new java.net.ServerSocket(0)) {
        closed = probe.getLocalPort();
      }
      assertThatThrownBy(() -> s.scrape("127.0.0.1", "localhost", closed))
          .isInstanceOfSatisfying(
              JmxScraper.ScrapeException.class,
              e -> assertThat(e.kind()).isEqualTo(JmxScraper.ScrapeException.Kind.OTHER));
    } finally {
      plain.close();
    }
  }

  @Test
  void aCaTextWithoutACertificateIsRefused() {
    assertThatThrownBy(() -> JmxScraper.secured(Duration.ofSeconds(1), "not a certificate", null))
        .isInstanceOf(java.security.GeneralSecurityException.class);
    assertThatThrownBy(() -> JmxScraper.secured(Duration.ofSeconds(1), null, null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
