package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.hbase.CacheSample;
import java.io.IOException;

/** Reads one RegionServer's cache figures: {@code JmxScraper} in production, a fake in tests. */
@FunctionalInterface
public interface CacheProbe {
  CacheSample scrape(String host, int infoPort) throws IOException;

  /**
   * Milliseconds the RegionServer's JVM spent in GC since it started (sizing advice); null when
   * this probe cannot tell.
   */
  default Long gcTimeMillis(String host, int infoPort) throws IOException {
    return null;
  }

  /**
   * The server at {@code address}, which must prove it is {@code name} where it is asked over TLS
   * ({@link InfoServers}); over plain HTTP the name plays no part.
   */
  default CacheSample scrape(String address, String name, int infoPort) throws IOException {
    return scrape(address, infoPort);
  }

  /** {@link #gcTimeMillis(String, int)} as {@link #scrape(String, String, int)}. */
  default Long gcTimeMillis(String address, String name, int infoPort) throws IOException {
    return gcTimeMillis(address, infoPort);
  }
}
