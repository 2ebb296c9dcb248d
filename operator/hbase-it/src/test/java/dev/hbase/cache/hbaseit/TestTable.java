package dev.hbase.cache.hbaseit;

import static org.awaitility.Awaitility.await;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * A test table of {@code rows} rows of {@value #VALUE_BYTES} random bytes, flushed to HFiles (64
 * KiB blocks, about 60 rows each). Rows {@code STRIDE*j + r} for distinct j lie in distinct data
 * blocks, so reading one row per stride touches exactly one new data block per get (see {@link
 * #STRIDE}).
 */
final class TestTable {

  static final byte[] FAMILY = Bytes.toBytes("f");
  static final byte[] QUALIFIER = Bytes.toBytes("q");
  static final int VALUE_BYTES = 1000;

  /**
   * Rows per stride; a row is picked in the first half of its stride, so two picks are at least
   * STRIDE/2 = 80 rows apart, more than the ~62 rows of one 64 KiB block.
   */
  static final int STRIDE = 160;

  final TableName name;
  final int rows;
  private final Connection connection;

  private TestTable(Connection connection, TableName name, int rows) {
    this.connection = connection;
    this.name = name;
    this.rows = rows;
  }

  static String row(int i) {
    return String.format("row%08d", i);
  }

  /** Creates the table split into {@code regions} regions, writes the rows and flushes. */
  static TestTable create(Connection connection, String name, int rows, int regions)
      throws IOException {
    TableName table = TableName.valueOf(name);
    try (Admin admin = connection.getAdmin()) {
      byte[][] splits = new byte[regions - 1][];
      for (int i = 1; i < regions; i++) {
        splits[i - 1] = Bytes.toBytes(row(rows / regions * i));
      }
      admin.createTable(
          TableDescriptorBuilder.newBuilder(table)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY))
              .build(),
          splits);
      Random random = new Random(42);
      try (BufferedMutator m = connection.getBufferedMutator(table)) {
        byte[] value = new byte[VALUE_BYTES];
        for (int i = 0; i < rows; i++) {
          random.nextBytes(value);
          m.mutate(new Put(Bytes.toBytes(row(i))).addColumn(FAMILY, QUALIFIER, value.clone()));
        }
      }
      admin.flush(table);
    }
    return new TestTable(connection, table, rows);
  }

  /** Reads every row once with a scan that caches its blocks (warms the cache). */
  long scanAll() throws IOException {
    return scanRows(0, rows);
  }

  /** Reads rows [from, to) once with a scan that caches their blocks. */
  long scanRows(int from, int to) throws IOException {
    long n = 0;
    Scan scan =
        new Scan()
            .withStartRow(Bytes.toBytes(row(from)))
            .withStopRow(Bytes.toBytes(row(to)))
            .setCacheBlocks(true)
            .setCaching(500);
    try (Table t = connection.getTable(name);
        ResultScanner scanner = t.getScanner(scan)) {
      for (Result r = scanner.next(); r != null; r = scanner.next()) {
        n++;
      }
    }
    return n;
  }

  /**
   * Reads rows [from, to) once in {@code parts} parallel scans that cache their blocks: on slow
   * storage, the cache warms {@code parts} times as fast as with one scan.
   */
  void scanInParallel(int from, int to, int parts) throws Exception {
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(parts);
    try {
      List<java.util.concurrent.Future<Long>> futures = new ArrayList<>();
      for (int i = 0; i < parts; i++) {
        int a = from + (to - from) / parts * i;
        int b = i == parts - 1 ? to : from + (to - from) / parts * (i + 1);
        futures.add(pool.submit(() -> scanRows(a, b)));
      }
      long n = 0;
      for (java.util.concurrent.Future<Long> f : futures) {
        n += f.get();
      }
      if (n != to - from) {
        throw new IllegalStateException("scanned " + n + " rows of " + (to - from));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * One row in each of {@code count} distinct data blocks, at a random place within each stride;
   * strides {@code first..first+count-1}.
   */
  List<String> rowsInDistinctBlocks(int first, int count, long seed) {
    if ((first + count) * STRIDE > rows) {
      throw new IllegalArgumentException("table has only " + rows / STRIDE + " strides");
    }
    Random random = new Random(seed);
    List<String> out = new ArrayList<>();
    for (int j = first; j < first + count; j++) {
      out.add(row(j * STRIDE + random.nextInt(STRIDE / 2)));
    }
    return out;
  }

  /** Gets the rows one by one; fails if one is missing. */
  void get(List<String> rowKeys) throws IOException {
    try (Table t = connection.getTable(name)) {
      for (String key : rowKeys) {
        Result r = t.get(new Get(Bytes.toBytes(key)));
        if (r.isEmpty() || r.getValue(FAMILY, QUALIFIER).length != VALUE_BYTES) {
          throw new AssertionError("row " + key + " missing");
        }
      }
    }
  }

  /**
   * Scrapes until the sample satisfies the condition (HBase refreshes its counters periodically).
   */
  static CacheSample awaitSample(
      JmxScraper scraper, int infoPort, Duration timeout, Predicate<CacheSample> condition) {
    CacheSample[] last = new CacheSample[1];
    await()
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(500))
        .ignoreExceptions()
        .until(
            () -> {
              last[0] = scraper.scrape(LocalHBase.HOST, infoPort);
              return condition.test(last[0]);
            });
    return last[0];
  }

  /** The next sample once the counters stopped moving for two refreshes (a quiet baseline). */
  static CacheSample settledSample(JmxScraper scraper, int infoPort) throws Exception {
    return settledSample(scraper, infoPort, Duration.ofSeconds(90));
  }

  /**
   * As above, waiting up to {@code max}: on slow storage a PersistentFile server's prefetch on open
   * keeps the counters moving for minutes.
   */
  static CacheSample settledSample(JmxScraper scraper, int infoPort, Duration max)
      throws Exception {
    CacheSample previous = null;
    for (int i = 0; i < max.toMillis() / 1500; i++) {
      CacheSample now;
      try {
        now = scraper.scrape(LocalHBase.HOST, infoPort);
      } catch (JmxScraper.ScrapeException e) {
        // the bean appears a few seconds after the info server does
        Thread.sleep(1000);
        continue;
      }
      if (previous != null
          && now.data().equals(previous.data())
          && now.all().equals(previous.all())
          && now.l2UsedBytes() == previous.l2UsedBytes()) {
        return now;
      }
      previous = now;
      Thread.sleep(1500);
    }
    throw new AssertionError("cache counters never settled");
  }
}
