package dev.hbase.cache.operator;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Liveness: whether the operator has reached the API server lately. A background check calls {@link
 * #check()} every few seconds (a GET of /version); {@code /healthz} fails once no call has
 * succeeded for {@code grace}, so that the kubelet restarts an operator whose client is stuck (a
 * fresh process reconnects, and a standby takes over the lease meanwhile). Short outages (an API
 * server restart) stay within the grace.
 */
final class ApiServerHealth {

  /** A call to the API server; throws when it cannot be reached. */
  interface Probe {
    void call() throws Exception;
  }

  private final Probe probe;
  private final Clock clock;
  private final Duration grace;
  private volatile Instant lastSuccess;
  private volatile String lastError;

  ApiServerHealth(Probe probe, Clock clock, Duration grace) {
    this.probe = probe;
    this.clock = clock;
    this.grace = grace;
    this.lastSuccess = clock.instant(); // a starting process gets the grace too
  }

  void check() {
    try {
      probe.call();
      lastSuccess = clock.instant();
      lastError = null;
    } catch (Exception e) {
      lastError = e.toString();
    }
  }

  /** Null when healthy, else why not. */
  String problem() {
    Instant since = lastSuccess;
    if (Duration.between(since, clock.instant()).compareTo(grace) <= 0) {
      return null;
    }
    return "no answer from the API server since " + since + " (" + lastError + ")";
  }
}
