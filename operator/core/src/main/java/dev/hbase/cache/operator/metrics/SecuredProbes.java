package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Probes for info servers over HTTPS (spec.hbase.tls), one per CA and identity. */
@FunctionalInterface
public interface SecuredProbes {

  /**
   * A probe that trusts exactly the certificates of {@code caPem} (host names checked) and
   * authenticates with SPNEGO as {@code spnego} (null: none).
   *
   * @throws GeneralSecurityException the text holds no certificate
   */
  CacheProbe probe(String caPem, KerberosLogin spnego) throws GeneralSecurityException;

  /**
   * {@link JmxScraper#secured}, one per CA text and login, kept (a few dozen at most: the map is
   * emptied when it grows past that, after a run of rotations).
   */
  static SecuredProbes jmx(Duration timeout) {
    Map<String, CacheProbe> made = new ConcurrentHashMap<>();
    return (pem, spnego) -> {
      String key = digest(pem) + "|" + (spnego == null ? "" : spnego.id());
      CacheProbe p = made.get(key);
      if (p == null) {
        JmxScraper s = JmxScraper.secured(timeout, pem, spnego);
        p =
            new CacheProbe() {
              @Override
              public CacheSample scrape(String host, int infoPort) throws IOException {
                return s.scrape(host, infoPort);
              }

              @Override
              public Long gcTimeMillis(String host, int infoPort) throws IOException {
                return s.gcTimeMillis(host, infoPort);
              }
            };
        if (made.size() >= 32) {
          made.clear();
        }
        made.put(key, p);
      }
      return p;
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
