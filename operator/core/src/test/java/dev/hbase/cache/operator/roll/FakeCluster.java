package dev.hbase.cache.operator.roll;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
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
 * comes back with a new UID and the template's revision, Ready after a delay), and the HBase
 * master (servers register with a new start code, report a bit later, regions move on
 * decommission and recommission). It records what the roller caused: restarts per pod and the
 * most pods down at once.
 */
final class FakeCluster {
  static final int PORT = 16020;

  final class Pod {
    final String name;
    final int ordinal;
    String uid;
    String revision;
    boolean ready = true;
    boolean terminating;
    String stuck;
    /** When a recreated pod becomes Ready; null when it is not coming back by itself. */
    Instant readyAt;
    boolean neverReady;
    long l2Used;
    /** Created before the cache volume template: lacks its claim volume until re-created. */
    boolean missingClaimVolumes;

    Pod(String name, int ordinal, String revision) {
      this.name = name;
      this.ordinal = ordinal;
      this.uid = name + "-uid-0";
      this.revision = revision;
    }

    String host() {
      return name + ".rs.ns.svc.cluster.local";
    }
  }

  final class Server {
    ServerId id;
    List<String> regions = new ArrayList<>();
    boolean reported = true;
    Instant reportAt;

    Server(ServerId id) {
      this.id = id;
    }
  }

  Instant now = Instant.parse("2026-11-21T10:00:00Z");
  final Map<String, Pod> pods = new LinkedHashMap<>();
  final Map<String, Server> servers = new LinkedHashMap<>(); // by pod name
  final Set<String> decommissioned = new TreeSet<>();
  /** Replicas whose pod object does not exist (evicted, not yet re-created). */
  final Set<String> absent = new TreeSet<>();
  final List<ServerId> dead = new ArrayList<>();
  int regionsInTransition;
  String metaPod;
  boolean balancerOn = true;
  boolean masterReachable = true;
  String templateRevision = "rev-new";
  Duration restartTime = Duration.ofSeconds(20);
  Duration reportDelay = Duration.ofSeconds(3);
  /** L2 kept across a restart, as a fraction (1.0 persistent, 0 not). */
  double retainOnRestart = 1.0;
  /** Regions a recommission sends elsewhere the first time (HBase's early-recommission bug). */
  int misplaceOnRecommission;

  final Map<String, Integer> restarts = new HashMap<>();
  final List<String> restartOrder = new ArrayList<>();
  final List<Action> executed = new ArrayList<>();
  int maxDown;
  long startCodes = 1000;

  FakeCluster(int n, String revision) {
    for (int i = 0; i < n; i++) {
      String name = "rs-" + i;
      Pod p = new Pod(name, i, revision);
      p.l2Used = 1000L * (i + 1);
      pods.put(name, p);
      servers.put(name, new Server(new ServerId(p.host(), PORT, startCodes++)));
    }
  }

  FakeCluster regions(String pod, String... encoded) {
    servers.get(pod).regions.addAll(List.of(encoded));
    return this;
  }

  FakeCluster meta(String pod) {
    metaPod = pod;
    servers.get(pod).regions.add(RollModel.META_REGION);
    return this;
  }

  // ------------------------------------------------------------------ what the roller sees

  ClusterSnapshot snapshot() {
    if (!masterReachable) {
      return ClusterSnapshot.unreachable(now, "connection refused");
    }
    List<ServerState> live = new ArrayList<>();
    for (Server s : servers.values()) {
      live.add(new ServerState(s.id, 16030, s.regions, s.reported, decommissioned.contains(s.id.toString())));
    }
    ServerId meta = metaPod == null || !servers.containsKey(metaPod) ? null : servers.get(metaPod).id;
    List<ServerId> decom = decommissioned.stream().map(ServerId::parse).toList();
    return new ClusterSnapshot(now, true, null, live, dead, regionsInTransition, meta, decom, balancerOn);
  }

  List<PodView> podViews() {
    return pods.values().stream()
        .filter(p -> !absent.contains(p.name))
        .map(p -> new PodView(p.name, p.uid, p.ordinal, p.revision, p.ready && !p.terminating, p.terminating, p.stuck, "10.0.0." + p.ordinal, p.missingClaimVolumes))
        .toList();
  }

  Map<String, CacheView> caches() {
    Map<String, CacheView> m = new HashMap<>();
    pods.values().stream().filter(p -> p.ready).forEach(p -> m.put(p.name, new CacheView(p.l2Used, 0.97)));
    return m;
  }

  static RollModel.Settings settings(String revision) {
    return new RollModel.Settings(revision, RolloutSpec.Strategy.DrainAndReload, 1, false, Duration.ofMinutes(10), 0.95, null, Duration.ofMinutes(5), true);
  }

  RollModel.Input input(RollModel.Settings s) {
    return new RollModel.Input(s, podViews(), snapshot(), caches(), now, pods.size());
  }

  /** The pod object is gone (evicted, say) and not re-created yet; the master reassigns its regions. */
  void vanish(String pod) {
    Pod p = pods.get(pod);
    absent.add(pod);
    p.ready = false;
    p.readyAt = null;
    Server s = servers.remove(pod);
    List<Server> others = new ArrayList<>(servers.values());
    for (int i = 0; s != null && i < s.regions.size(); i++) {
      others.get(i % others.size()).regions.add(s.regions.get(i));
    }
    if (pod.equals(metaPod)) {
      metaPod = podOf(others.get(0));
    }
  }

  /** The StatefulSet controller re-creates the pod from the current template. */
  void reappear(String pod) {
    Pod p = pods.get(pod);
    absent.remove(pod);
    p.uid = pod + "-uid-recreated";
    p.revision = templateRevision;
    p.readyAt = now.plus(restartTime);
  }

  // ------------------------------------------------------------------ what the roller does

  void apply(Action a) {
    executed.add(a);
    if (a instanceof RollModel.DeletePod d) {
      Pod p = pods.get(d.pod());
      if (p == null || !p.uid.equals(d.uid()) || p.terminating) {
        return; // the real delete is conditional on this instance
      }
      restarts.merge(p.name, 1, Integer::sum);
      restartOrder.add(p.name);
      p.terminating = true;
      p.ready = false;
      Server s = servers.remove(p.name);
      if (s != null && !s.regions.isEmpty()) {
        // not drained: the master reassigns its regions to the others
        List<Server> others = new ArrayList<>(servers.values());
        for (int i = 0; i < s.regions.size(); i++) {
          others.get(i % others.size()).regions.add(s.regions.get(i));
        }
        if (p.name.equals(metaPod)) {
          metaPod = podOf(others.get(0));
        }
      }
      p.readyAt = now.plus(restartTime);
    } else if (a instanceof RollModel.Decommission d) {
      decommissioned.add(d.server().toString());
      Server s = byId(d.server());
      List<Server> others = servers.values().stream().filter(x -> x != s && !decommissioned.contains(x.id.toString())).toList();
      if (s.regions.remove(RollModel.META_REGION)) {
        others.get(0).regions.add(RollModel.META_REGION);
        metaPod = podOf(others.get(0));
      }
      for (int i = 0; i < s.regions.size(); i++) {
        others.get(i % others.size()).regions.add(s.regions.get(i));
      }
      s.regions.clear();
    } else if (a instanceof RollModel.Recommission r) {
      decommissioned.removeIf(x -> ServerId.parse(x).sameEndpoint(r.oldServer()));
      Server target = servers.values().stream().filter(x -> x.id.sameEndpoint(r.oldServer())).findFirst().orElseThrow();
      assertThat(target.reported).as("recommission before the first report sends regions astray").isTrue();
      int misplace = misplaceOnRecommission;
      misplaceOnRecommission = 0;
      for (String region : r.regions()) {
        servers.values().forEach(x -> x.regions.remove(region));
        if (misplace-- > 0) {
          servers.values().stream().filter(x -> x != target).findFirst().orElseThrow().regions.add(region);
        } else {
          target.regions.add(region);
        }
      }
    } else if (a instanceof RollModel.SwitchBalancer b) {
      balancerOn = b.on();
    }
  }

  /** Time passes: pods come back, servers register and report. */
  void tick(Duration d) {
    now = now.plus(d.isZero() ? Duration.ofMillis(100) : d);
    for (Pod p : pods.values()) {
      if (p.terminating && p.readyAt != null) {
        // the StatefulSet controller recreates it at once; the kubelet starts it
        p.terminating = false;
        p.uid = p.name + "-uid-" + restarts.get(p.name);
        p.missingClaimVolumes = false;
        p.revision = templateRevision;
        p.ready = false;
        p.l2Used = (long) (p.l2Used * retainOnRestart);
      }
      if (!p.ready && !p.terminating && !absent.contains(p.name) && p.readyAt != null && !now.isBefore(p.readyAt) && !p.neverReady && p.stuck == null) {
        p.ready = true;
        Server s = new Server(new ServerId(p.host(), PORT, startCodes++));
        s.reported = false;
        s.reportAt = now.plus(reportDelay);
        servers.put(p.name, s);
      }
    }
    for (Server s : servers.values()) {
      if (!s.reported && s.reportAt != null && !now.isBefore(s.reportAt)) {
        s.reported = true;
      }
    }
    long down = pods.values().stream().filter(p -> !p.ready || p.terminating).count();
    maxDown = (int) Math.max(maxDown, down);
  }

  /**
   * Runs the roller until {@code done} holds or {@code maxSteps} passed, the way the reconciler
   * does: step, carry out the actions, keep the state, wait the requeue delay.
   */
  RolloutStatus run(RolloutStatus state, RollModel.Settings s, int maxSteps, Predicate<RolloutStatus> done, List<Roller.Decision> log) {
    for (int i = 0; i < maxSteps; i++) {
      Roller.Decision d = Roller.step(state, input(s));
      d.actions().forEach(this::apply);
      state = d.state();
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

  Server byId(ServerId id) {
    return servers.values().stream().filter(x -> x.id.equals(id)).findFirst().orElseThrow();
  }

  String podOf(Server s) {
    return servers.entrySet().stream().filter(e -> e.getValue() == s).findFirst().orElseThrow().getKey();
  }

  boolean allAt(String revision) {
    return pods.values().stream().allMatch(p -> revision.equals(p.revision) && p.ready);
  }
}
