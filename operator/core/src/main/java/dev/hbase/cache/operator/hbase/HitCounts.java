package dev.hbase.cache.operator.hbase;

import java.util.OptionalDouble;

/**
 * Hits and misses of one cache tier (or of all blocks, or of data blocks only).
 *
 * @param hits lookups that found the block
 * @param misses lookups that did not
 */
public record HitCounts(long hits, long misses) {

  public static final HitCounts ZERO = new HitCounts(0, 0);

  public HitCounts {
    if (hits < 0 || misses < 0) {
      throw new IllegalArgumentException("negative counts: hits=" + hits + " misses=" + misses);
    }
  }

  public long requests() {
    return hits + misses;
  }

  /** hits / (hits + misses); empty when there was no lookup (not 0, not NaN). */
  public OptionalDouble ratio() {
    return requests() == 0 ? OptionalDouble.empty() : OptionalDouble.of((double) hits / requests());
  }

  /** {@link #ratio()} for status fields: null when there was no lookup. */
  public Double ratioOrNull() {
    OptionalDouble r = ratio();
    return r.isPresent() ? r.getAsDouble() : null;
  }

  public HitCounts plus(HitCounts other) {
    return new HitCounts(hits + other.hits, misses + other.misses);
  }

  /** this - earlier; only meaningful when neither counter went down. */
  public HitCounts minus(HitCounts earlier) {
    return new HitCounts(hits - earlier.hits, misses - earlier.misses);
  }

  boolean anyBelow(HitCounts earlier) {
    return hits < earlier.hits || misses < earlier.misses;
  }
}
