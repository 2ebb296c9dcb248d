package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.hbase.TlsJmxScraper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/** Probes for info servers over HTTPS (spec.hbase.tls), one per CA and identity. */
@FunctionalInterface
public interface SecuredProbes {

  /** The most probes kept: each is an SSL context and a login, no thread or socket. */
  int KEPT = 128;

  /**
   * A probe that trusts exactly the certificates of {@code caPem} (each server's name checked) and
   * authenticates with SPNEGO as {@code spnego} (null: none).
   *
   * @throws GeneralSecurityException the text holds no certificate
   */
  CacheProbe probe(String caPem, KerberosLogin spnego) throws GeneralSecurityException;

  /**
   * {@link JmxScraper#secured}, one per CA text and login, the {@value #KEPT} used last kept (one
   * team's rotations do not push out the others' while there are fewer).
   */
  static SecuredProbes jmx(Duration timeout) {
    Map<String, CacheProbe> made =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, CacheProbe> eldest) {
            return size() > KEPT;
          }
        };
    return (pem, spnego) -> {
      String key = digest(pem) + "|" + (spnego == null ? "" : spnego.id());
      synchronized (made) {
        CacheProbe p = made.get(key);
        if (p == null) {
          p = probe(JmxScraper.secured(timeout, pem, spnego));
          made.put(key, p);
        }
        return p;
      }
    };
  }

  private static CacheProbe probe(TlsJmxScraper s) {
    return new CacheProbe() {
      @Override
      public CacheSample scrape(String host, int infoPort) throws IOException {
        return s.scrape(host, infoPort);
      }

      @Override
      public CacheSample scrape(String address, String name, int infoPort) throws IOException {
        return s.scrape(address, name, infoPort);
      }

      @Override
      public Long gcTimeMillis(String address, String name, int infoPort) throws IOException {
        return s.gcTimeMillis(address, name, infoPort);
      }
    };
  }

  private static String digest(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
