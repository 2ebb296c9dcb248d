package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.roll.RollModel;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * When a pod's RegionServer container was last restarted in the pod by the kubelet (a crash, an OOM
 * kill, a failed liveness probe: no delete), as the Observer reports it to the roller ({@code
 * PodView.restartedInPlaceAt}, {@code roll.Homecomings}); a crash loop reports none.
 */
final class ContainerRestarts {
  private ContainerRestarts() {}

  /**
   * When the RegionServer container {@code regionServer} (null: any container) last started again
   * in the same pod (restart count above 0): the kubelet restarted it after a crash, an OOM kill or
   * a failed liveness probe. A sidecar's restart is none: the roller would ask HBase for nothing.
   * Null if none did, or the time cannot be read.
   */
  static Instant restartedInPlaceAt(Pod p, String regionServer) {
    var st = p.getStatus();
    if (st == null || st.getContainerStatuses() == null) {
      return null;
    }
    return st.getContainerStatuses().stream()
        .filter(c -> regionServer == null || regionServer.equals(c.getName()))
        .filter(c -> c.getRestartCount() != null && c.getRestartCount() > 0)
        .filter(c -> !crashLooping(c))
        .map(c -> c.getState() == null ? null : c.getState().getRunning())
        .filter(r -> r != null && r.getStartedAt() != null)
        .map(r -> parseTime(r.getStartedAt()))
        .filter(Objects::nonNull)
        .max(java.util.Comparator.naturalOrder())
        .orElse(null);
  }

  /**
   * A container restarted more than once whose run before this one lasted under {@link
   * #CRASH_LOOP}: it keeps dying (an OOM kill at load, say), and regions sent back to it would move
   * again when it dies next. Such a restart is not reported.
   */
  static boolean crashLooping(ContainerStatus c) {
    var last = c.getLastState() == null ? null : c.getLastState().getTerminated();
    if (c.getRestartCount() < 2 || last == null) {
      return false;
    }
    Instant from = parseTime(last.getStartedAt());
    Instant to = parseTime(last.getFinishedAt());
    return from != null && to != null && Duration.between(from, to).compareTo(CRASH_LOOP) < 0;
  }

  /**
   * The RegionServer container's last termination as the kubelet reports it: its current state if
   * terminated (not restarted yet), else its last state's. Null if it never terminated in this pod,
   * if the time it ended cannot be read, or when the container is not named ({@code regionServer}
   * null): a sidecar's termination must never pass for the RegionServer's ({@code roll.Crashes}
   * expires servers on it).
   */
  static RollModel.Termination lastTermination(Pod p, String regionServer) {
    var st = p.getStatus();
    if (regionServer == null || st == null || st.getContainerStatuses() == null) {
      return null;
    }
    return st.getContainerStatuses().stream()
        .filter(c -> regionServer.equals(c.getName()))
        .map(
            c -> {
              var now = c.getState() == null ? null : c.getState().getTerminated();
              return now != null
                  ? now
                  : c.getLastState() == null ? null : c.getLastState().getTerminated();
            })
        .filter(Objects::nonNull)
        .map(
            t ->
                parseTime(t.getFinishedAt()) == null
                    ? null
                    : new RollModel.Termination(
                        t.getReason(),
                        t.getExitCode(),
                        parseTime(t.getStartedAt()),
                        parseTime(t.getFinishedAt())))
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  /** See {@link #crashLooping}. */
  static final Duration CRASH_LOOP = Duration.ofMinutes(10);

  private static Instant parseTime(String rfc3339) {
    if (rfc3339 == null) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(rfc3339).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      return null;
    }
  }
}
