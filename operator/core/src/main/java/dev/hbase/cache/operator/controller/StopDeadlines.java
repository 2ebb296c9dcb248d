package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.render.PodHooks;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Stops whose grace period would not leave HBase its own shutdown time after the warm stop's hold.
 * The preStop hook (warm-stop.sh) cannot learn the grace period a stop was given: it holds up to
 * its bound, which the pod's terminationGracePeriodSeconds leaves HBase's own time after. A stop
 * given less (kubectl delete --grace-period, an eviction's DeleteOptions) shows on the pod as its
 * {@code deletionTimestamp}, the moment of the SIGKILL; a stop of the kubelet's own (a node's
 * graceful shutdown, a node-pressure eviction: a {@code DisruptionTarget} condition with reason
 * {@code TerminationByKubelet}) shows no deadline at all. For such a pod whose RegionServer is
 * still live, the operator stops the RegionServer through HBase (its own graceful stop: it closes
 * its regions and writes its cache map, as after SIGTERM) once the deadline less HBase's time and
 * {@link #REACTION} has come, at once when the deadline is unknown; the hook ends with it. Only for
 * pods that run the operator's warm stop hook (a template's own preStop hook is left to its
 * timing).
 */
final class StopDeadlines {
  /** What the operator takes to see the pod and reach HBase, counted before the deadline. */
  static final Duration REACTION = Duration.ofSeconds(5);

  static final String TERMINATION_BY_KUBELET = "TerminationByKubelet";

  /**
   * A RegionServer to stop now.
   *
   * @param left the time to the pod's SIGKILL, null when unknown (a stop of the kubelet's own)
   */
  record Release(String pod, String uid, ServerId server, int regions, Duration left) {}

  /** The stops due now, and the time until the next one is due (null: none pending). */
  record Due(List<Release> now, Duration next) {}

  /** The pods (UIDs) whose RegionServer this operator stopped, and when (forgotten after a day). */
  private final Map<String, Instant> released = new ConcurrentHashMap<>();

  private final Events events;
  private final BooleanSupplier leading;

  StopDeadlines(Events events, BooleanSupplier leading) {
    this.events = events;
    this.leading = leading;
  }

  /**
   * Stops the RegionServers {@link #due} now (once per pod; not while this operator does not lead)
   * and says so in a {@link Reason#WarmStopShortened} event; returns when to look again for the
   * next one, null if none is pending.
   */
  Duration release(
      KubernetesClient client,
      BlockCachePolicy policy,
      List<PodView> pods,
      Function<String, Optional<Pod>> cachedPod,
      String regionServer,
      ClusterSnapshot hbase,
      Supplier<HBaseCluster> cluster,
      Duration shutdown,
      Instant now) {
    released.values().removeIf(at -> at.isBefore(now.minus(Duration.ofDays(1))));
    Due due = due(pods, cachedPod, regionServer, hbase, shutdown, now, released.keySet());
    for (Release r : due.now()) {
      if (!leading.getAsBoolean()) {
        break;
      }
      String message = message(r, shutdown);
      try {
        cluster.get().stopServer(r.server(), message);
        released.put(r.uid(), now);
        events.warn(client, policy, Reason.WarmStopShortened, message);
      } catch (HBaseClusterException e) {
        events.warn(
            client,
            policy,
            Reason.ActionFailed,
            "stop " + r.server() + " failed: " + e.getMessage());
      }
    }
    return due.next();
  }

  /**
   * @param pods the policy's pods, as the roller sees them
   * @param cachedPod each pod as the informer has it
   * @param regionServer the RegionServer container's name
   * @param shutdown HBase's own shutdown time (the plan's terminationGracePeriodSeconds)
   * @param released the pods (UIDs) whose RegionServer the operator stopped already
   */
  static Due due(
      List<PodView> pods,
      Function<String, Optional<Pod>> cachedPod,
      String regionServer,
      ClusterSnapshot hbase,
      Duration shutdown,
      Instant now,
      Set<String> released) {
    List<Release> out = new ArrayList<>();
    Duration next = null;
    if (!hbase.masterReachable()) {
      return new Due(out, null);
    }
    for (PodView v : pods) {
      Pod p = cachedPod.apply(v.name()).orElse(null);
      if (p == null || released.contains(v.uid()) || !warmStopHook(p, regionServer)) {
        continue;
      }
      Optional<ClusterSnapshot.ServerState> server = RollModel.serverFor(hbase, v);
      if (server.isEmpty()) {
        continue; // stopped already, or never registered: nothing to close
      }
      Instant deadline = deadline(p);
      boolean byKubelet = deadline == null && stoppedByKubelet(p);
      if (deadline == null && !byKubelet) {
        continue; // not stopping
      }
      Duration wait =
          byKubelet
              ? Duration.ZERO
              : Duration.between(now, deadline.minus(shutdown).minus(REACTION));
      if (wait.isNegative() || wait.isZero()) {
        out.add(
            new Release(
                v.name(),
                v.uid(),
                server.get().id(),
                server.get().regionCount(),
                byKubelet ? null : Duration.between(now, deadline)));
      } else if (next == null || wait.compareTo(next) < 0) {
        next = wait;
      }
    }
    return new Due(out, next);
  }

  /** When the kubelet SIGKILLs the terminating pod: its deletionTimestamp; null if none. */
  static Instant deadline(Pod p) {
    String t = p.getMetadata().getDeletionTimestamp();
    return t == null ? null : Instant.parse(t);
  }

  /** Whether the kubelet stops the pod on its own (no delete): its DisruptionTarget says so. */
  static boolean stoppedByKubelet(Pod p) {
    var st = p.getStatus();
    return st != null
        && st.getConditions() != null
        && st.getConditions().stream()
            .anyMatch(
                c ->
                    "DisruptionTarget".equals(c.getType())
                        && "True".equals(c.getStatus())
                        && TERMINATION_BY_KUBELET.equals(c.getReason()));
  }

  /** Whether the pod's RegionServer container runs the operator's warm stop as its preStop. */
  static boolean warmStopHook(Pod p, String regionServer) {
    if (p.getSpec() == null || p.getSpec().getContainers() == null) {
      return false;
    }
    for (Container c : p.getSpec().getContainers()) {
      if (c.getName().equals(regionServer)
          && c.getLifecycle() != null
          && c.getLifecycle().getPreStop() != null) {
        return PodHooks.isOurs(c.getLifecycle().getPreStop(), PodHooks.WARM_STOP);
      }
    }
    return false;
  }

  /** The event's words for a release. */
  static String message(Release r, Duration shutdown) {
    String left =
        r.left() == null
            ? "the kubelet stops it (TerminationByKubelet) with a grace period it does not show"
            : "its SIGKILL is due in "
                + Math.max(0, r.left().toSeconds())
                + " s (the pod's deletionTimestamp), which leaves less than HBase's own "
                + shutdown.toSeconds()
                + " s after the warm stop's hold";
    return r.pod()
        + ": "
        + left
        + "; the operator stopped its RegionServer "
        + r.server()
        + " through HBase now, with "
        + r.regions()
        + " regions still on it (HBase closes them and writes its cache map)";
  }
}
