package dev.hbase.cache.operator.hbase;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Instant;

/**
 * One scrape of one RegionServer's block cache figures, from the bean {@value #BEAN} on its info
 * port ({@code /jmx?qry=...}). Counters are cumulative since the RegionServer started; HBase
 * refreshes them every few seconds ({@code hbase.regionserver.metrics.period}, 5 s, and the
 * metrics2 JMX cache, 10 s, by default).
 *
 * <p>Sizes as HBase 2.6.4 reports them: {@code l1CacheSize}/{@code l2CacheSize} are the bytes in
 * use and {@code l1CacheFreeSize}/{@code l2CacheFreeSize} the bytes free, so the capacity is their
 * sum (measured: an offheap L2 of 256 MiB shows size 0 + free 266,858,496 when empty).
 *
 * <p>Counting, as measured on 2.6.4 by operator/hbase-it (N gets, each of a distinct data block):
 * with an L1 only (Lru), N cold gets add N data misses and the same gets again N data hits. With an
 * L2 (CombinedBlockCache: Offheap, File, PersistentFile) N cold gets add <em>2N</em> data misses
 * (and 2N L2 misses), while N warm gets add N data hits: a cold read counts twice, so the raw data
 * ratio under-reads the share of reads served from cache whenever there are misses (half the reads
 * cached shows 1/3). With MetaOnly ({@code hbase.block.data.cacheonread=false}) data blocks are not
 * looked up at all: data hits and misses stay 0.
 *
 * @param at when the sample was taken
 * @param startTime the RegionServer's start ({@code regionServerStartTime}, epoch ms): changes on
 *     restart, when every counter starts again from zero
 * @param serverName {@code tag.serverName}, "host,port,startcode"
 * @param data data blocks only ({@code blockCacheDataHitCount}/{@code blockCacheDataMissCount}):
 *     the headline ratio; index and bloom blocks are nearly always cached and flatter the rest
 * @param all every block type ({@code blockCacheHitCount}/{@code blockCacheMissCount})
 * @param l1 the on-heap LRU ({@code l1CacheHitCount}/{@code l1CacheMissCount})
 * @param l2 the BucketCache ({@code l2CacheHitCount}/{@code l2CacheMissCount}), zero without one
 * @param l1UsedBytes {@code l1CacheSize}
 * @param l1FreeBytes {@code l1CacheFreeSize}
 * @param l2UsedBytes {@code l2CacheSize}
 * @param l2FreeBytes {@code l2CacheFreeSize}
 * @param blockCount {@code blockCacheCount}
 * @param dataBlockCount {@code blockCacheDataBlockCount}
 * @param evictions {@code blockCacheEvictionCount}
 * @param failedInsertions {@code blockCacheFailedInsertionCount}: blocks not cached because the
 *     BucketCache writer queues were full
 * @param regionCount {@code regionCount}: the regions it serves (-1: not in the answer)
 */
public record CacheSample(
    Instant at,
    long startTime,
    String serverName,
    HitCounts data,
    HitCounts all,
    HitCounts l1,
    HitCounts l2,
    long l1UsedBytes,
    long l1FreeBytes,
    long l2UsedBytes,
    long l2FreeBytes,
    long blockCount,
    long dataBlockCount,
    long evictions,
    long failedInsertions,
    long regionCount) {

  public static final String BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server";

  public long l1CapacityBytes() {
    return l1UsedBytes + l1FreeBytes;
  }

  public long l2CapacityBytes() {
    return l2UsedBytes + l2FreeBytes;
  }

  /** Whether the RegionServer runs a BucketCache (L2). */
  public boolean hasL2() {
    return l2CapacityBytes() > 0;
  }

  /**
   * Parses the body of {@code /jmx?qry=}{@value #BEAN}.
   *
   * @throws IOException when the body is not JSON or has no RegionServer Server bean
   */
  public static CacheSample fromJmxJson(String body, Instant at) throws IOException {
    return fromJmx(
        new java.io.ByteArrayInputStream(body.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
        at);
  }

  /**
   * {@link #fromJmxJson} from a stream, keeping only the {@link #ATTRIBUTES} of {@value #BEAN}
   * ({@link JmxBeans}).
   */
  static CacheSample fromJmx(java.io.InputStream body, Instant at) throws IOException {
    return fromBean(JmxBeans.find(body, BEAN, ATTRIBUTES), at);
  }

  /** The attributes of {@value #BEAN} that {@link #fromBean} reads. */
  static final java.util.Set<String> ATTRIBUTES =
      java.util.Set.of(
          "regionServerStartTime",
          "tag.serverName",
          "blockCacheDataHitCount",
          "blockCacheDataMissCount",
          "blockCacheHitCount",
          "blockCacheMissCount",
          "l1CacheHitCount",
          "l1CacheMissCount",
          "l2CacheHitCount",
          "l2CacheMissCount",
          "l1CacheSize",
          "l1CacheFreeSize",
          "l2CacheSize",
          "l2CacheFreeSize",
          "blockCacheCount",
          "blockCacheDataBlockCount",
          "blockCacheEvictionCount",
          "blockCacheFailedInsertionCount",
          "regionCount");

  static CacheSample fromBean(JsonNode bean, Instant at) throws IOException {
    Bean b = new Bean(bean);
    return new CacheSample(
        at,
        b.number("regionServerStartTime"),
        bean.path("tag.serverName").asText(null),
        b.counts("blockCacheDataHitCount", "blockCacheDataMissCount"),
        b.counts("blockCacheHitCount", "blockCacheMissCount"),
        b.counts("l1CacheHitCount", "l1CacheMissCount"),
        b.counts("l2CacheHitCount", "l2CacheMissCount"),
        b.number("l1CacheSize"),
        b.number("l1CacheFreeSize"),
        b.number("l2CacheSize"),
        b.number("l2CacheFreeSize"),
        b.number("blockCacheCount"),
        b.number("blockCacheDataBlockCount"),
        b.number("blockCacheEvictionCount"),
        b.number("blockCacheFailedInsertionCount"),
        bean.path("regionCount").asLong(-1));
  }

  private record Bean(JsonNode node) {
    long number(String attribute) throws IOException {
      JsonNode value = node.get(attribute);
      if (value == null || !value.isNumber()) {
        throw new IOException("attribute " + attribute + " missing or not a number in " + BEAN);
      }
      return value.asLong();
    }

    HitCounts counts(String hits, String misses) throws IOException {
      return new HitCounts(number(hits), number(misses));
    }
  }
}
