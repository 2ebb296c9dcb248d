package dev.hbase.cache.operator.metrics;

import java.time.Duration;

/**
 * What one reconcile may spend waiting for its policy's info servers: {@link #WAIT} in all, over
 * every ask it makes (the TLS check, the roller's fresh samples, the metrics interval), and the
 * namespace whose share of the {@link ScrapePool} its asks draw on. A reconcile runs on one of
 * JOSDK's reconcile threads, which every policy shares (50 by default, one per policy at a time):
 * whatever a policy's info servers do, its reconcile holds that thread at most {@link #WAIT} for
 * them, and an ask it stops waiting for goes on without it to the exchange's own deadline ({@link
 * dev.hbase.cache.operator.hbase.JmxScraper#deadline}).
 */
public final class ScrapeBudget {
  /**
   * The most one reconcile waits for info servers, in all: a little over one exchange's deadline
   * (10 s: twice the scrapers' 5 s timeout), so that one slow server still gets its answer in.
   */
  public static final Duration WAIT = Duration.ofSeconds(15);

  private final String tenant;
  private final Duration wait;
  private long leftNanos;

  ScrapeBudget(String tenant, Duration wait) {
    this.tenant = tenant;
    this.wait = wait;
    this.leftNanos = wait.toNanos();
  }

  /** The whole budget. */
  Duration total() {
    return wait;
  }

  /** A reconcile's budget, for a policy of {@code namespace}. */
  public static ScrapeBudget of(String namespace) {
    return new ScrapeBudget(namespace, WAIT);
  }

  /** The namespace whose share the asks take. */
  String tenant() {
    return tenant;
  }

  synchronized long leftNanos() {
    return Math.max(0, leftNanos);
  }

  synchronized void spent(long nanos) {
    leftNanos -= nanos;
  }
}
