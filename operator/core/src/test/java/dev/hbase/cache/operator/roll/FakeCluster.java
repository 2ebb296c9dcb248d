package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.render.PodHooks;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * A small simulated world for the roller: the StatefulSet controller and kubelet (a deleted pod
 * comes back with a new UID and the template's revision, Ready after a delay, and its RegionServer
 * registers with the {@link SimulatedHBase} master), in virtual time. It records what the roller
 * caused: restarts per pod and the most pods down at once.
 */
final class FakeCluster {
  final class Pod {
    final String name;
    final int ordinal;
    String uid;
    String revision;
    boolean ready = true;
    boolean terminating;
    String stuck;

    /** When its container last started again in the pod (a crash restart), else null. */
    Instant restartedInPlaceAt;

    /** Its RegionServer container's last termination, as the kubelet reports it ({@link #kill}). */
    RollModel.Termination terminated;

    /** When the killed instance's ZooKeeper session expires, if it is still listed then. */
    Instant sessionEndsAt;

    /** When a recreated pod becomes Ready; null when it is not coming back by itself. */
    Instant readyAt;

    boolean neverReady;

    /** Created from an older pod template (another manager changed it) until re-created. */
    boolean templateChanged;

    /** Created before the cache volume template: lacks its claim volume until re-created. */
    boolean missingClaimVolumes;

    /** Why someone else stopped it (its DisruptionTarget reason, or Deleted); null otherwise. */
    String stopCause;

    /**
     * Stopped by someone else: its preStop hook holds the RegionServer until it serves no region or
     * until then (the hook's bound); null when no hook is running.
     */
    Instant heldUntil;

    Pod(String name, int ordinal, String revision) {
      this.name = name;
      this.ordinal = ordinal;
      this.uid = name + "-uid-0";
      this.revision = revision;
    }

    /** The name its RegionServer registers under: its DNS name, unless the test says otherwise. */
    String host() {
      return registersAs.apply(this);
    }

    String fqdn() {
      return name + ".rs.ns.svc.cluster.local";
    }

    String ip() {
      return "10.0.0." + ordinal;
    }
  }

  /** The policy's namespace ("ns") in DNS: each pod is {@code <pod>.rs.ns.svc.cluster.local}. */
  static final Zone ZONE = new Zone("ns", "cluster.local");

  Instant now = Instant.parse("2026-11-21T10:00:00Z");
  final SimulatedHBase hbase = new SimulatedHBase(() -> now);
  final Map<String, Pod> pods = new LinkedHashMap<>();

  /** Replicas whose pod object does not exist (evicted, not yet re-created). */
  final Set<String> absent = new TreeSet<>();

  String templateRevision = "rev-new";

  /** The StatefulSet's replicas: a pod at or above them is not re-created once it stopped. */
  int replicas;

  /** Regions a stopping RegionServer still held when it stopped (closed for others to reopen). */
  int closedCold;

  /** Whether the preStop hook holds a stopping RegionServer ({@code DrainAndReload}). */
  boolean preStopHook = true;

  Duration restartTime = Duration.ofSeconds(20);

  /** From a restarted RegionServer's registration to its pod's readiness probe passing. */
  Duration readinessLag = Duration.ZERO;

  /** Pods whose regions the roller sent back while the pod was not Ready. */
  final Set<String> recommissionedWhileUnready = new TreeSet<>();

  /** Drained regions sent to a server that had them cached, and to one that had not. */
  int drainedToCached;

  int drainedToUncached;

  final Map<String, Integer> restarts = new HashMap<>();
  final List<String> restartOrder = new ArrayList<>();
  final List<Action> executed = new ArrayList<>();
  int maxDown;

  /** How a pod's RegionServer registers with the master (the chart's way: its DNS name). */
  private final java.util.function.Function<Pod, String> registersAs;

  FakeCluster(int n, String revision) {
    this(n, revision, Pod::fqdn);
  }

  /** Pods whose RegionServers register under {@code registersAs} (an IP, a bare name...). */
  FakeCluster(int n, String revision, java.util.function.Function<Pod, String> registersAs) {
    this.registersAs = registersAs;
    for (int i = 0; i < n; i++) {
      String name = "rs-" + i;
      Pod p = new Pod(name, i, revision);
      pods.put(name, p);
      hbase.persistedL2(name, 1000L * (i + 1));
      hbase.register(name, p.host(), p.ip(), List.of());
    }
    replicas = n;
    now = now.plus(hbase.reportDelay); // every server has reported
  }

  /**
   * Someone else deletes or evicts the pod (kubectl, a node drain, a scale-down): it is
   * terminating; its preStop hook holds the RegionServer while it serves regions, for at most the
   * hook's bound (none without the hook); then it stops and, below the replicas, the pod is
   * re-created.
   */
  void stopByOther(String pod, String cause) {
    Pod p = pods.get(pod);
    p.terminating = true;
    p.ready = false;
    p.readyAt = null; // re-created once its RegionServer has stopped (tick)
    p.stopCause = cause;
    p.heldUntil =
        now.plus(preStopHook ? Duration.ofSeconds(PodHooks.WARM_STOP_SECONDS) : Duration.ZERO);
    restarts.merge(p.name, 1, Integer::sum);
  }

  /**
   * The StatefulSet is scaled to {@code n}: the pods above are stopped; the missing ones below are
   * created from the current template (a new RegionServer registers once the pod starts).
   */
  void scaleTo(int n) {
    replicas = n;
    for (Pod p : pods.values()) {
      if (p.ordinal >= n && !p.terminating) {
        stopByOther(p.name, "Deleted");
      }
    }
    for (int i = 0; i < n; i++) {
      String name = "rs-" + i;
      if (!pods.containsKey(name)) {
        Pod p = new Pod(name, i, templateRevision);
        p.uid = name + "-uid-scaled-up";
        p.ready = false;
        p.readyAt = now.plus(restartTime);
        pods.put(name, p);
      }
    }
  }

  /** The pod's server hosts these regions, and caches them. */
  FakeCluster regions(String pod, String... encoded) {
    SimulatedHBase.Server s = hbase.servers.get(pod);
    for (String r : encoded) {
      s.regions.add(r);
      s.cachedMb.put(r, hbase.regionMb);
    }
    return this;
  }

  FakeCluster meta(String pod) {
    return regions(pod, RollModel.META_REGION);
  }

  // ------------------------------------------------------------------ what the roller sees

  List<PodView> podViews() {
    return views(p -> p.ordinal < replicas);
  }

  /** The pods at or above the replicas. */
  List<PodView> leaving() {
    return views(p -> p.ordinal >= replicas);
  }

  private List<PodView> views(Predicate<Pod> which) {
    return pods.values().stream()
        .filter(which)
        .filter(p -> !absent.contains(p.name))
        .map(
            p ->
                new PodView(
                    p.name,
                    p.uid,
                    p.ordinal,
                    p.revision,
                    p.ready && !p.terminating,
                    p.terminating,
                    p.stuck,
                    p.ip(),
                    p.missingClaimVolumes,
                    p.templateChanged,
                    p.terminating ? (p.stopCause == null ? "Deleted" : p.stopCause) : null,
                    p.restartedInPlaceAt,
                    ZONE.podName(p.name, "rs"),
                    p.terminated))
        .toList();
  }

  /** The L2 capacity every RegionServer reports (null: not known, as before a first sample). */
  Long l2Capacity;

  Map<String, CacheView> caches() {
    Map<String, CacheView> m = new HashMap<>();
    // the operator scrapes every running pod that is not stuck: its RegionServer answers once
    // registered
    pods.values().stream()
        .filter(p -> !p.terminating && p.stuck == null && hbase.registered(p.name))
        .filter(p -> !hbase.killed.contains(p.name)) // its process is gone: /jmx refuses
        .forEach(p -> m.put(p.name, new CacheView(hbase.l2Used(p.name), 0.97, l2Capacity)));
    return m;
  }

  static RollModel.Settings settings(String revision) {
    return new RollModel.Settings(
        revision,
        RolloutSpec.Strategy.DrainAndReload,
        1,
        false,
        Duration.ofMinutes(10),
        0.95,
        null,
        Duration.ofMinutes(5),
        true,
        false,
        0);
  }

  /** {@code status.lastCrash} as the last step left it ({@link #run}). */
  dev.hbase.cache.api.v1alpha1.status.CrashStatus lastCrash;

  RollModel.Input input(RollModel.Settings s) {
    return input(s, List.of());
  }

  /** Same, with the target's second record of the marks ({@code controller.BalancerRecord}). */
  RollModel.Input input(RollModel.Settings s, List<String> recordedMarks) {
    return new RollModel.Input(
        s,
        podViews(),
        hbase.snapshot(),
        caches(),
        now,
        replicas,
        leaving(),
        ZONE,
        lastCrash,
        recordedMarks);
  }

  /**
   * The pod object is gone (evicted, say) and not re-created yet; the master reassigns its regions.
   */
  void vanish(String pod) {
    Pod p = pods.get(pod);
    absent.add(pod);
    p.ready = false;
    p.readyAt = null;
    hbase.unregister(pod);
  }

  /**
   * The pod's RegionServer is killed (SIGKILL, an OOM kill) and the kubelet restarts its container
   * in the same pod: same UID, no preStop hook. The master reassigns its regions; the new instance
   * registers with its persisted cache {@link #restartTime} later.
   */
  void crash(String pod) {
    Pod p = pods.get(pod);
    if (p.terminating) {
      p.heldUntil = now; // no restart in a terminating pod: its hook ends with the process
      return;
    }
    p.ready = false;
    hbase.unregister(pod);
    p.readyAt = now.plus(restartTime);
    p.restartedInPlaceAt = p.readyAt;
    restarts.merge(p.name, 1, Integer::sum);
  }

  /** A killed instance's ZooKeeper session: 30 s, the demo chart's. */
  Duration sessionTimeout = Duration.ofSeconds(30);

  /**
   * The pod's RegionServer container is killed (SIGKILL, a container OOM kill) and the kubelet
   * restarts it in the same pod: it reports the container terminated at once (its time rounded down
   * to the second, as the kubelet's), and the new instance registers {@link #restartTime} later.
   * Unlike {@link #crash}, the master still lists the old instance live, its regions unavailable,
   * until it is expired, its ZooKeeper session ends ({@link #sessionTimeout}) or the new instance
   * registers at its endpoint.
   */
  void kill(String pod, String reason) {
    Pod p = pods.get(pod);
    Instant started = Instant.ofEpochMilli(hbase.servers.get(pod).id.startCode());
    p.ready = false;
    hbase.kill(pod);
    if (p.terminating) {
      // the kubelet restarts no container of a terminating pod: its preStop hook ends with the
      // process, and the pod is re-created once it has stopped (tick)
      p.terminated =
          new RollModel.Termination(
              reason, 137, started, now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
      p.heldUntil = now;
      return;
    }
    p.terminated =
        new RollModel.Termination(
            reason, 137, started, now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    p.readyAt = now.plus(restartTime);
    p.restartedInPlaceAt = p.readyAt;
    p.sessionEndsAt = now.plus(sessionTimeout);
    restarts.merge(p.name, 1, Integer::sum);
  }

  /** The regions on instances whose process is gone: no read of them succeeds. */
  List<String> unavailable() {
    return hbase.killed.stream().flatMap(k -> hbase.regionsOf(k).stream()).sorted().toList();
  }

  /** The StatefulSet controller re-creates the pod from the current template. */
  void reappear(String pod) {
    Pod p = pods.get(pod);
    absent.remove(pod);
    p.uid = pod + "-uid-recreated";
    p.revision = templateRevision;
    p.templateChanged = false;
    p.readyAt = now.plus(restartTime);
  }

  // ------------------------------------------------------------------ what the roller does

  void apply(Action a) {
    executed.add(a);
    try {
      if (a instanceof RollModel.DeletePod d) {
        Pod p = pods.get(d.pod());
        if (p == null || !p.uid.equals(d.uid()) || p.terminating) {
          return; // the real delete is conditional on this instance
        }
        restarts.merge(p.name, 1, Integer::sum);
        restartOrder.add(p.name);
        p.terminating = true;
        p.ready = false;
        hbase.unregister(p.name); // not drained: the master reassigns its regions
        p.readyAt = now.plus(restartTime);
      } else if (a instanceof RollModel.Drain d) {
        d.targets()
            .forEach(
                (region, target) -> {
                  boolean cached =
                      hbase.servers.values().stream()
                          .anyMatch(x -> x.id.equals(target) && x.cachedMb.containsKey(region));
                  if (cached) {
                    drainedToCached++;
                  } else {
                    drainedToUncached++;
                  }
                });
        hbase.drain(d.server(), d.targets());
      } else if (a instanceof RollModel.Recommission r) {
        pods.values().stream()
            .filter(p -> p.host().equals(r.oldServer().host()) && !p.ready)
            .forEach(p -> recommissionedWhileUnready.add(p.name));
        hbase.recommission(r.oldServer(), r.regions());
      } else if (a instanceof RollModel.SwitchBalancer b) {
        hbase.balancer(b.on());
      } else if (a instanceof RollModel.ExpireServer x) {
        hbase.expire(x.server());
      }
    } catch (HBaseClusterException e) {
      throw new AssertionError(
          "the roller sent " + a + " when HBase could not take it: " + e.getMessage(), e);
    }
  }

  /** Time passes: pods come back, their RegionServers register (and report a bit later). */
  void tick(Duration d) {
    now = now.plus(d.isZero() ? Duration.ofMillis(100) : d);
    for (Pod p : List.copyOf(pods.values())) {
      if (p.sessionEndsAt != null && !now.isBefore(p.sessionEndsAt)) {
        hbase.sessionExpired(p.name);
        p.sessionEndsAt = null;
      }
      if (p.heldUntil != null) {
        // the preStop hook returns once the server holds no region, or at its bound; HBase
        // stops (closing what it still holds), then the pod is re-created below the replicas
        List<String> left = hbase.registered(p.name) ? hbase.regionsOf(p.name) : List.of();
        if (left.isEmpty() || !now.isBefore(p.heldUntil)) {
          closedCold += left.size();
          hbase.unregister(p.name);
          p.heldUntil = null;
          p.stopCause = null;
          if (p.ordinal >= replicas) {
            pods.remove(p.name);
            continue;
          }
          p.readyAt = now.plus(restartTime);
        }
      }
      if (p.terminating && p.readyAt != null) {
        // the StatefulSet controller recreates it at once; the kubelet starts it
        p.terminating = false;
        p.uid = p.name + "-uid-" + restarts.get(p.name);
        p.missingClaimVolumes = false;
        p.templateChanged = false;
        p.revision = templateRevision;
        p.ready = false;
      }
      if (!p.ready
          && !p.terminating
          && !absent.contains(p.name)
          && p.readyAt != null
          && !now.isBefore(p.readyAt)
          && !p.neverReady
          && p.stuck == null) {
        if (!hbase.registered(p.name) || hbase.killed.contains(p.name)) {
          hbase.register(p.name, p.host(), p.ip(), List.of());
          p.sessionEndsAt = null;
        }
        p.ready = !now.isBefore(p.readyAt.plus(readinessLag));
      }
    }
    long down = pods.values().stream().filter(p -> !p.ready || p.terminating).count();
    maxDown = (int) Math.max(maxDown, down);
  }

  /**
   * Runs the roller until {@code done} holds or {@code maxSteps} passed, the way the reconciler
   * does: step, carry out the actions, keep the state, wait the requeue delay.
   */
  RolloutStatus run(
      RolloutStatus state,
      RollModel.Settings s,
      int maxSteps,
      Predicate<RolloutStatus> done,
      List<Roller.Decision> log) {
    for (int i = 0; i < maxSteps; i++) {
      Roller.Decision d = Roller.step(state, input(s));
      d.actions().forEach(this::apply);
      state = d.state();
      lastCrash = d.lastCrash();
      if (log != null) {
        log.add(d);
      }
      if (done.test(state)) {
        return state;
      }
      tick(d.requeueAfter());
    }
    return state;
  }

  boolean allAt(String revision) {
    return pods.values().stream().allMatch(p -> revision.equals(p.revision) && p.ready);
  }
}
