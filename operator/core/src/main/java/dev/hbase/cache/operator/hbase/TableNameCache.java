package dev.hbase.cache.operator.hbase;

import java.lang.reflect.Field;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.hbase.TableName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A bound on HBase's static table-name cache in the operator's JVM. HBase's {@code TableName}
 * interns every name it makes in a static {@code CopyOnWriteArraySet} that is never emptied and is
 * scanned on each lookup; the names come from the answers of servers tenants name (regions, regions
 * in transition, group tables, hbase:meta rows). {@link AnswerWeight#MAX_TABLES} bounds one answer;
 * this bounds many: past {@link #MAX} names the cache is emptied.
 *
 * <p>Emptying is safe: the cache only interns. {@code TableName.equals} compares the names (HBase
 * compares table names with {@code equals}; the 2.6.4 client has no {@code ==} on them), so a name
 * made after it equals one made before; the next lookup of a name makes it again.
 */
final class TableNameCache {
  private static final Logger LOG = LoggerFactory.getLogger(TableNameCache.class);

  /**
   * The most names kept: a cluster of a thousand tables, several times over; each lookup scans them
   * all (a review: 2.3 s of CPU for one answer's 4,096 new names against 16,384 cached).
   */
  static final int MAX = 4096;

  private static final Set<?> CACHE;

  private static final AtomicLong EMPTIED = new AtomicLong();

  static {
    try {
      Field f = TableName.class.getDeclaredField("tableCache");
      f.setAccessible(true);
      CACHE = (Set<?>) f.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private TableNameCache() {}

  /** The names cached now. */
  static int size() {
    return CACHE.size();
  }

  /** How many times the cache was emptied. */
  static long emptied() {
    return EMPTIED.get();
  }

  /** Empties the cache if it holds more than {@link #MAX} names; cheap otherwise (a size read). */
  static void bound() {
    int n = CACHE.size();
    if (n > MAX) {
      CACHE.clear();
      EMPTIED.incrementAndGet();
      LOG.info(
          "HBase's table-name cache held {} names, more than {}: emptied (names from the answers of"
              + " servers the policies name)",
          n,
          MAX);
    }
  }
}
