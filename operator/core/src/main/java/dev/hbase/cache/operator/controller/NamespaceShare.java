package dev.hbase.cache.operator.controller;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Each namespace's share of JOSDK's reconcile threads: at most {@link #PER_NAMESPACE} of one
 * namespace's policies reconcile at once. A reconcile holds its thread while it waits for what the
 * tenant controls (its info servers, 15 s at most; its HBase, the connection's deadlines), so
 * without a share one namespace's many slow policies could hold all 50 threads and every other
 * namespace's reconciles would queue behind them. With it, a tenant holds at most a fifth of them;
 * its further reconciles are turned away at once and come back {@link #retryAfter()} later (JOSDK
 * keeps at most one reconcile per policy in flight, so each comes back as itself).
 *
 * <p>Several tenants that each fill their share can still hold every thread between them: the share
 * bounds one tenant, not their sum.
 */
final class NamespaceShare {
  /** A fifth of JOSDK's 50 reconcile threads ({@code DEFAULT_RECONCILIATION_THREADS_NUMBER}). */
  static final int PER_NAMESPACE = 10;

  private final int limit;
  private final Map<String, Integer> running = new HashMap<>();
  private long turnedAway;

  NamespaceShare() {
    this(PER_NAMESPACE);
  }

  NamespaceShare(int limit) {
    this.limit = limit;
  }

  /** Takes one of the namespace's places; false when all are taken (nothing to {@link #exit}). */
  synchronized boolean enter(String namespace) {
    int now = running.getOrDefault(namespace, 0);
    if (now >= limit) {
      turnedAway++;
      return false;
    }
    running.put(namespace, now + 1);
    return true;
  }

  /** Gives back a place {@link #enter} took. */
  synchronized void exit(String namespace) {
    running.computeIfPresent(namespace, (k, n) -> n <= 1 ? null : n - 1);
  }

  /** The namespace's reconciles running now. */
  synchronized int running(String namespace) {
    return running.getOrDefault(namespace, 0);
  }

  /** Reconciles turned away since the start. */
  synchronized long turnedAway() {
    return turnedAway;
  }

  /** When a turned-away reconcile comes back: 1 to 1.5 s, spread so they do not return at once. */
  Duration retryAfter() {
    return Duration.ofMillis(1_000 + ThreadLocalRandom.current().nextLong(500));
  }
}
