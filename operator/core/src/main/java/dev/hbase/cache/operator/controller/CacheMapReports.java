package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.operator.controller.Observation.CacheMapRemoval;
import dev.hbase.cache.operator.render.PodHooks;
import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the cache-map-guard (render/cache-map-guard.sh) removed from a pod's cache volume, read from
 * the termination messages it leaves: its init container's (the pod's start) and the RegionServer
 * container's previous instance (its postStart hook at a restart in place writes the same file of
 * the container, so it shows once that instance has ended). A message begins with the reason; one
 * of a guard from before the reasons ("removed the empty BucketCache persistence map ...") is an
 * {@link Reason#EmptyCacheMapRemoved}.
 */
final class CacheMapReports {
  static final Set<Reason> REASONS =
      Set.of(
          Reason.EmptyCacheMapRemoved,
          Reason.TruncatedCacheMapRemoved,
          Reason.UnreadableCacheMapRemoved);

  private CacheMapReports() {}

  /** The removals a pod's containers report, the init container's first. */
  static List<CacheMapRemoval> of(Pod p, String regionServer) {
    List<CacheMapRemoval> out = new ArrayList<>();
    if (p.getStatus() == null) {
      return out;
    }
    String pod = p.getMetadata().getName();
    for (ContainerStatus c : listOrEmpty(p.getStatus().getInitContainerStatuses())) {
      // the current run only: reporting lastState too would alternate two messages per pod
      if (PodHooks.CACHE_MAP_GUARD.equals(c.getName()) && c.getState() != null) {
        removal(pod, c.getState().getTerminated(), false).ifPresent(out::add);
      }
    }
    for (ContainerStatus c : listOrEmpty(p.getStatus().getContainerStatuses())) {
      if (c.getName().equals(regionServer) && c.getLastState() != null) {
        removal(pod, c.getLastState().getTerminated(), true).ifPresent(out::add);
      }
    }
    return out;
  }

  /**
   * The removal a terminated container's message reports. An init container's is any message (the
   * guard writes none when it keeps the map); the RegionServer container's only one the guard
   * wrote, when that instance started.
   */
  static Optional<CacheMapRemoval> removal(
      String pod, ContainerStateTerminated t, boolean regionServer) {
    if (t == null || t.getMessage() == null || t.getMessage().isBlank()) {
      return Optional.empty();
    }
    String message = t.getMessage().strip();
    Reason reason = reason(message);
    if (reason == null && (regionServer || !message.startsWith("removed the empty"))) {
      return Optional.empty();
    }
    if (reason == null) {
      reason = Reason.EmptyCacheMapRemoved;
    } else {
      message = message.substring(reason.name().length() + 1).strip();
    }
    return Optional.of(
        new CacheMapRemoval(
            pod,
            reason,
            regionServer ? t.getStartedAt() : t.getFinishedAt(),
            regionServer ? "at the start of its previous container" : "before its start",
            message));
  }

  /**
   * Sets each RegionServer row's {@code cacheMapRemoved} to the latest removal reported for its pod
   * now, or clears it: a pod started again with its map kept reports none.
   */
  static void apply(List<RegionServerStatus> rows, List<CacheMapRemoval> removals) {
    for (RegionServerStatus r : rows) {
      r.setCacheMapRemoved(
          removals.stream()
              .filter(x -> x.pod().equals(r.getPod()))
              .max(Comparator.comparing(x -> String.valueOf(x.at())))
              .map(
                  x ->
                      new RegionServerStatus.CacheMapRemoval()
                          .setReason(x.reason().name())
                          .setAt(x.at())
                          .setMessage(x.message()))
              .orElse(null));
    }
  }

  private static Reason reason(String message) {
    int colon = message.indexOf(':');
    if (colon <= 0) {
      return null;
    }
    String word = message.substring(0, colon);
    return REASONS.stream().filter(r -> r.name().equals(word)).findFirst().orElse(null);
  }

  private static <T> List<T> listOrEmpty(List<T> l) {
    return l == null ? List.of() : l;
  }
}
