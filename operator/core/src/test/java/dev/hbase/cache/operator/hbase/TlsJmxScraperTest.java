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

  @Test
  void aCaTextWithoutACertificateIsRefused() {
    assertThatThrownBy(() -> JmxScraper.secured(Duration.ofSeconds(1), "not a certificate", null))
        .isInstanceOf(java.security.GeneralSecurityException.class);
    assertThatThrownBy(() -> JmxScraper.secured(Duration.ofSeconds(1), null, null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
