package dev.hbase.cache.hbaseit;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.RollSummary;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Roller;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;

/**
 * The operator's {@link Roller}, unchanged, driving real RegionServers: local processes of {@link
 * LocalHBase} (one loopback address each) stand in for the StatefulSet's pods, the way {@code
 * RollStep} drives real pods. A pod delete is a graceful stop (SIGTERM, the cache map written) and
 * a start of the same server with the same cache directory; the pod is Ready once its new
 * RegionServer has reported to the master. Everything HBase-side goes through the operator's {@link
 * AdminHBaseCluster}. The loop looks again after the roller's requeue delay, or sooner when a "pod"
 * changed (the operator's pod informer does the same).
 *
 * <p>{@code hbaseOffload} replaces the operator's drain by HBase's own ({@code
 * decommissionRegionServers(servers, true)}: every region to a random server), what the operator
 * did before the drain targets: the baseline of the comparison.
 */
final class LocalRoll {

  /** One roll's figures. */
  record Result(
      String label,
      Instant start,
      Instant end,
      RollSummary lastRoll,
      Map<String, Double> podSeconds,
      Double servedFromCache,
      Reader.Stats reads,
      List<String> events,
      List<RegionMoves.Move> moves) {

    String summary() {
      return String.format(
          Locale.ROOT,
          "%s: %d s; data reads from cache, all servers: %s; per pod delete -> regions home %s s;"
              + " region moves of the drains %s, of the reloads %s; reads: %s",
          label,
          Duration.between(start, end).toSeconds(),
          servedFromCache == null ? "n/a" : String.format(Locale.ROOT, "%.4f", servedFromCache),
          podSeconds,
          RegionMoves.summary(moves, true),
          RegionMoves.summary(moves, false),
          reads.summary());
    }
  }

  private final LocalHBase hbase;
  private final AdminHBaseCluster admin;
  private final Admin rawAdmin;
  private final LocalHBase.RegionServerSettings[] settings;
  private final int[] generation;
  private final String[] revision;
  private final boolean[] terminating;

  /** When each "pod"'s RegionServer last started again in the same pod ({@link #crash}). */
  private final Instant[] restartedInPlaceAt;

  /**
   * How each RegionServer's /jmx is read: plain HTTP, or over HTTPS proving {@link
   * SecureKdc#SERVICE_HOST} with SPNEGO (the probe a policy's {@code spec.hbase.tls} gets).
   */
  private final CacheProbe probe;

  private final List<CacheSample> samples = new CopyOnWriteArrayList<>();
  private final Object podEvents = new Object();
  private final Thread sampler;
  private volatile boolean stop;
  private final List<String> timeline = new CopyOnWriteArrayList<>();

  /** The roller's last decision, for the message of a roll that does not finish. */
  private volatile String lastState;

  boolean hbaseOffload;

  LocalRoll(
      LocalHBase hbase,
      AdminHBaseCluster admin,
      LocalHBase.RegionServerSettings[] settings,
      String revision)
      throws Exception {
    this(hbase, admin, settings, revision, new JmxScraper(Duration.ofSeconds(3))::scrape);
  }

  LocalRoll(
      LocalHBase hbase,
      AdminHBaseCluster admin,
      LocalHBase.RegionServerSettings[] settings,
      String revision,
      CacheProbe probe)
      throws Exception {
    this.probe = probe;
    this.hbase = hbase;
    this.admin = admin;
    this.rawAdmin = hbase.connection().getAdmin();
    this.settings = settings;
    int n = settings.length;
    this.generation = new int[n];
    this.revision = new String[n];
    this.terminating = new boolean[n];
    this.restartedInPlaceAt = new Instant[n];
    java.util.Arrays.fill(this.revision, revision);
    sampler = new Thread(this::sample, "jmx-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Every RegionServer's /jmx every second (HBase refreshes the counters every second here). */
  private void sample() {
    while (!stop) {
      for (int i = 0; i < settings.length; i++) {
        try {
          samples.add(
              probe.scrape(LocalHBase.HOST, SecureKdc.SERVICE_HOST, hbase.regionServerInfoPort(i)));
        } catch (Exception e) {
          // down or starting
        }
      }
      try {
        Thread.sleep(1000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * Rolls every pod to {@code target} with the operator's roller; returns the roll's figures once
   * it is Idle and the reads of every pod's regions are cached where they are.
   */
  Result roll(String label, String target, Reader reader, Duration timeout) throws Exception {
    Instant start = Instant.now();
    Map<String, PodRoll> lastSeen = new TreeMap<>();
    List<String> events = new ArrayList<>();
    RolloutStatus state =
        drive(
            settings(target),
            target,
            start.plus(timeout),
            events,
            lastSeen,
            (st, pods, snap) ->
                st.getPhase() == Phase.Idle
                    && pods.stream().allMatch(p -> p.ready() && target.equals(p.revision())));
    if (state == null) {
      throw new AssertionError(
          label + ": roll not done within " + timeout + "; the roller's last state: " + lastState);
    }
    Instant end = Instant.now();
    Thread.sleep(1500); // the counters of the roll's last second reach /jmx
    Map<String, Double> podSeconds = new TreeMap<>();
    lastSeen.forEach(
        (pod, r) -> {
          if (r.getDeletedAt() != null && r.getHomeAt() != null) {
            podSeconds.put(
                pod,
                Duration.between(Instant.parse(r.getDeletedAt()), Instant.parse(r.getHomeAt()))
                        .toMillis()
                    / 1000.0);
          }
        });
    return result(label, start, end, state, podSeconds, reader, events);
  }

  /**
   * RegionServer i killed (SIGKILL) and started again in the same "pod", as the kubelet restarts a
   * killed container: no drain, no graceful stop, the pod's UID unchanged. Once the master has
   * reassigned its regions (its old instance expired: a short ZooKeeper session, see {@code
   * WarmRollIT}) the same server starts on the same cache directory; then the roller runs at {@code
   * revision}, as the operator's reconciles do, until it is Idle with nothing in flight and server
   * i serves regions again, or until {@code timeout} (the result says which).
   */
  Result crash(String label, int i, String revision, Reader reader, Duration timeout)
      throws Exception {
    String host = hbase.regionServerHost(i);
    int port = hbase.regionServerPort(i);
    int regions = admin.snapshot().live().stream().mapToInt(x -> x.regionCount()).sum();
    HBaseProcess rs = hbase.regionServer(i);
    rs.kill();
    mark("rs-" + i + " killed (SIGKILL)");
    org.awaitility.Awaitility.await("rs-" + i + "'s regions reassigned by the master")
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              ClusterSnapshot s = admin.snapshot();
              return !rs.alive()
                  && s.masterReachable()
                  && s.liveAt(host, port).isEmpty()
                  && s.regionsInTransition() == 0
                  && s.live().stream().mapToInt(x -> x.regionCount()).sum() == regions;
            });
    mark("rs-" + i + "'s regions reassigned");
    restartedInPlaceAt[i] = Instant.now();
    hbase.startRegionServer(i, settings[i]);
    mark("rs-" + i + " listening (same pod)");
    List<String> events = new ArrayList<>();
    RolloutStatus state =
        drive(
            settings(revision),
            revision,
            Instant.now().plus(timeout),
            events,
            new TreeMap<>(),
            (st, pods, snap) ->
                st.getPhase() == Phase.Idle
                    && st.getInFlight().isEmpty()
                    && pods.stream().allMatch(PodView::ready)
                    && snap.liveAt(host, port).map(x -> x.regionCount() > 0).orElse(false));
    Instant end = Instant.now();
    Thread.sleep(1500);
    // from the restart on: what sending its regions home costs (the kill's own cost is before)
    return result(label, restartedInPlaceAt[i], end, state, Map.of(), reader, events);
  }

  private Result result(
      String label,
      Instant start,
      Instant end,
      RolloutStatus state,
      Map<String, Double> podSeconds,
      Reader reader,
      List<String> events)
      throws java.io.IOException {
    return new Result(
        label,
        start,
        end,
        state == null ? null : state.getLastRoll(),
        podSeconds,
        CacheRatios.servedFromCache(samples, start, end),
        reader.stats(start, end),
        events,
        RegionMoves.read(hbase.dir.resolve("logs").resolve("master.log"), start, end, timeline()));
  }

  private RollModel.Settings settings(String target) {
    return new RollModel.Settings(
        target,
        RolloutSpec.Strategy.DrainAndReload,
        1,
        false,
        Duration.ofMinutes(5),
        0.9,
        null,
        Duration.ofMinutes(2),
        true,
        false,
        0); // the planned L2 capacity is not checked here (the servers run the plan)
  }

  /** When the roller's loop may stop: the state after a step, the pods and HBase it saw. */
  interface Done {
    boolean test(RolloutStatus state, List<PodView> pods, ClusterSnapshot snap);
  }

  /**
   * The operator's loop: step, carry out the actions (a failed one keeps the previous state, as
   * RollStep does), look again after the requeue delay or when a "pod" changed. Returns the state
   * once {@code done}, or null at the deadline.
   */
  private RolloutStatus drive(
      RollModel.Settings s,
      String target,
      Instant deadline,
      List<String> events,
      Map<String, PodRoll> lastSeen,
      Done done)
      throws Exception {
    RolloutStatus state = null;
    while (Instant.now().isBefore(deadline)) {
      ClusterSnapshot snap = admin.snapshot();
      List<PodView> pods = pods(snap);
      Roller.Decision d =
          Roller.step(
              state,
              new RollModel.Input(s, pods, snap, caches(pods), Instant.now(), settings.length));
      boolean acted = true;
      for (RollModel.Action a : d.actions()) {
        if (!execute(a, target)) {
          acted = false; // as RollStep: the previous state stays, the same step again
          break;
        }
      }
      if (acted) {
        d.events().forEach(e -> events.add(e.reason() + ": " + e.message()));
        state = d.state();
      }
      lastState =
          d.state() == null
              ? null
              : d.state().getPhase()
                  + " "
                  + d.state().getMessage()
                  + " in flight "
                  + d.state().getInFlight();
      if (state != null) {
        state.getInFlight().forEach(r -> lastSeen.put(r.getPod(), r));
        if (done.test(state, pods, snap)) {
          return state;
        }
      }
      synchronized (podEvents) {
        podEvents.wait(Math.max(100, d.requeueAfter().toMillis()));
      }
    }
    return null;
  }

  /** The cluster's share of data reads served from cache over a window (all servers). */
  Double servedFromCache(Instant from, Instant to) {
    return CacheRatios.servedFromCache(samples, from, to);
  }

  private List<PodView> pods(ClusterSnapshot snap) {
    List<PodView> out = new ArrayList<>();
    for (int i = 0; i < settings.length; i++) {
      String host = hbase.regionServerHost(i);
      boolean running = hbase.regionServer(i) != null && hbase.regionServer(i).alive();
      boolean ready =
          running
              && !terminating[i]
              && snap.liveAt(host, hbase.regionServerPort(i))
                  .map(ClusterSnapshot.ServerState::reported)
                  .orElse(false);
      out.add(
          new PodView(
              "rs-" + i,
              "rs-" + i + "-" + generation[i],
              i,
              revision[i],
              ready,
              terminating[i],
              null,
              host,
              false,
              false,
              terminating[i] ? "Deleted" : null,
              restartedInPlaceAt[i]));
    }
    return out;
  }

  private Map<String, CacheView> caches(List<PodView> pods) {
    Map<String, CacheView> out = new HashMap<>();
    for (PodView p : pods) {
      if (p.terminating()) {
        continue;
      }
      try {
        CacheSample c =
            probe.scrape(
                LocalHBase.HOST, SecureKdc.SERVICE_HOST, hbase.regionServerInfoPort(p.ordinal()));
        out.put(
            p.name(),
            new CacheView(
                c.l2UsedBytes(),
                CacheRatios.dataReadHitRatio(c.data(), c.hasL2()),
                c.hasL2() ? c.l2CapacityBytes() : null));
      } catch (Exception e) {
        // not answering (yet)
      }
    }
    return out;
  }

  private void mark(String what) {
    timeline.add(Instant.now() + " " + what);
  }

  /** What the roll did, with times (actions, pod stops and starts). */
  List<String> timeline() {
    return List.copyOf(timeline);
  }

  private boolean execute(RollModel.Action a, String target) {
    mark(a.toString().replaceAll("targets=\\{.*\\}", "targets=..."));
    try {
      if (a instanceof RollModel.SwitchBalancer b) {
        admin.balancer(b.on());
      } else if (a instanceof RollModel.Drain d) {
        if (hbaseOffload) {
          if (!admin.decommissioned().contains(d.server())) {
            rawAdmin.decommissionRegionServers(
                List.of(
                    ServerName.valueOf(
                        d.server().host(), d.server().port(), d.server().startCode())),
                true);
          }
        } else {
          admin.drain(d.server(), d.targets());
        }
      } else if (a instanceof RollModel.Recommission r) {
        admin.recommission(r.oldServer(), r.regions());
      } else if (a instanceof RollModel.DeletePod p) {
        int i = Integer.parseInt(p.pod().substring("rs-".length()));
        if (!p.uid().equals("rs-" + i + "-" + generation[i]) || terminating[i]) {
          return true;
        }
        terminating[i] = true;
        Thread restart =
            new Thread(
                () -> {
                  try {
                    hbase.stopRegionServer(i);
                    mark("rs-" + i + " stopped");
                    generation[i]++;
                    revision[i] = target;
                    terminating[i] = false;
                    hbase.startRegionServer(i, settings[i]);
                    mark("rs-" + i + " listening");
                  } catch (Exception e) {
                    throw new IllegalStateException("restart of rs-" + i + " failed", e);
                  } finally {
                    synchronized (podEvents) {
                      podEvents.notifyAll();
                    }
                  }
                },
                "restart-rs-" + i);
        restart.setDaemon(true);
        restart.start();
      }
      return true;
    } catch (HBaseClusterException | java.io.IOException e) {
      System.out.println("LocalRoll: " + a + " failed: " + e);
      return false;
    }
  }

  void close() {
    stop = true;
    sampler.interrupt();
  }
}
