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
}
