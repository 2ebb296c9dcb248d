package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.metrics.CacheProbe;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * One simulated HBase master with its RegionServers and their /jmx, shared by the roller tests
 * (virtual time, one thread) and the operator tests on a real kube-apiserver (wall clock, called
 * from the operator's and the fake kubelet's threads; every method is synchronized).
 *
 * <p>What it models, because the roller depends on it: a RegionServer registers under a new start
 * code when its pod starts and sends its first load report {@link #reportDelay} later (regions sent
 * to it before that go astray: {@link #recommission} refuses, as the real one must not be called
 * then); hbase:meta is a region like the others and moves first and alone on a decommission; a
 * decommission mark stays on the instance's name until cleared; a server that goes away without a
 * drain has its regions reassigned round-robin to the others (the master's crash handling); a
 * persistent cache keeps {@link #retainOnRestart} of its L2 across a restart.
 */
public final class SimulatedHBase implements HBaseCluster {
  public static final int PORT = 16020;
  public static final int INFO_PORT = 16030;
  public static final String META = "1588230740";

  /** One live RegionServer instance. */
  public static final class Server {
    public final ServerId id;
    public final String ip;
    public final List<String> regions = new ArrayList<>();
    final Instant reportAt;
    long l2Used;

    /** MB cached per region, hosted or not (what its load report's regionCachedInfo says). */
    public final Map<String, Integer> cachedMb = new HashMap<>();

    long dataHits;
    long dataMisses;
    long evictions;
    long gcMillis;

    Server(ServerId id, String ip, Instant reportAt) {
      this.id = id;
      this.ip = ip;
      this.reportAt = reportAt;
    }
  }

  private final Supplier<Instant> clock;

  /** Live servers by pod name. */
  public final Map<String, Server> servers = new LinkedHashMap<>();

  public final Set<ServerId> decommissioned = new LinkedHashSet<>();

  /** The version the master reports ({@code getHBaseVersion}); null: not reported. */
  public volatile String version;

  public final List<ServerId> dead = new ArrayList<>();

  /** Every recommission fails (a mark HBase will not clear, for a while). */
  public volatile boolean recommissionFails;

  /** Calls of {@link #snapshot}, answered or not. */
  public volatile int snapshots;

  private final Map<String, Long> persistedL2 = new HashMap<>();
  private final Map<String, Map<String, Integer>> persistedCachedMb = new HashMap<>();

  /** What a region's blocks take in a cache once it has been open there (prefetched). */
  public volatile int regionMb = 10;

  /** Regions whose moves fail (a region stuck closing, say): a drain cannot take them away. */
  public final Set<String> unmovable = new LinkedHashSet<>();

  /** Region moves (opens on another server) so far. */
  public volatile int moves;

  public volatile int regionsInTransition;
  public volatile boolean balancerOn = true;

  /**
   * RegionServer groups: {@code host:port} -> group for the servers in a group other than default
   * (what {@code hbase:rsgroup} lists); empty: no groups.
   */
  public final Map<String, String> groups = new java.util.concurrent.ConcurrentHashMap<>();

  public volatile boolean masterReachable = true;

  /**
   * The identity lacks ADMIN: the balancer switch, drains and reloads are refused as HBase's ACLs
   * refuse them ({@link HBaseClusterException.AccessDenied}); the cluster's state is still read.
   */
  public volatile boolean adminDenied;

  /** Why the snapshot says the master is unreachable (HBase's error text). */
  public volatile String unreachableError = "connection refused";

  /** From registration to the first load report. */
  public volatile Duration reportDelay = Duration.ofSeconds(3);

  /** L2 kept across a restart, as a fraction (1.0 persistent, 0 not). */
  public volatile double retainOnRestart = 1.0;

  /** Regions the next recommission sends elsewhere (HBase's early-recommission behaviour). */
  public volatile int misplaceOnRecommission;

  /** Connections opened to this cluster (the operator caches them). */
  public volatile int connects;

  /** The Kerberos principal of each connection made (null: none), in order. */
  public final java.util.List<String> connectedAs =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  /** /jmx scrapes answered. */
  public volatile int scrapes;

  private long startCodes = 1000;

  public SimulatedHBase(Supplier<Instant> clock) {
    this.clock = clock;
  }

  // ------------------------------------------------------------------ what the kubelet causes

  /**
   * Pods whose RegionServer process died without a goodbye (SIGKILL, an OOM kill) while the master
   * still lists its instance live, its regions unavailable: until {@link #expire}, its ZooKeeper
   * session's end ({@link #sessionExpired}) or a new instance at its endpoint ({@link #register}).
   */
  public final Set<String> killed = new LinkedHashSet<>();

  /** Expiries carried out ({@link #expire} calls that expired a live instance). */
  public volatile int expirations;

  /** The pod's RegionServer process dies; the master knows nothing yet ({@link #killed}). */
  public synchronized void kill(String pod) {
    if (servers.containsKey(pod)) {
      killed.add(pod);
    }
  }

  /** The killed instance's ZooKeeper session expired: the master processes it as dead. */
  public synchronized void sessionExpired(String pod) {
    if (killed.remove(pod)) {
      dead.add(servers.get(pod).id);
      unregister(pod);
    }
  }

  /**
   * The pod's RegionServer starts: a new instance, reporting after {@link #reportDelay}. A killed
   * instance still listed at the pod's endpoint is expired by the master then (2.6.4's {@code
   * ServerManager.checkAndRecordNewServer}); dead names at the endpoint are cleared ({@code
   * DeadServer.cleanPreviousInstance}, which 2.6.4 runs at the new instance's first report).
   */
  public synchronized Server register(String pod, String host, String ip, List<String> regions) {
    if (killed.contains(pod)) {
      sessionExpired(pod);
    }
    dead.removeIf(d -> d.sameEndpoint(host, PORT));
    // a start code is the server's start time in epoch ms, as HBase's (unique, increasing)
    startCodes = Math.max(startCodes + 1, clock.get().toEpochMilli());
    Server s = new Server(new ServerId(host, PORT, startCodes), ip, clock.get().plus(reportDelay));
    s.regions.addAll(regions);
    s.regions.addAll(unassigned);
    unassigned.clear();
    s.l2Used = persistedL2.getOrDefault(pod, 64L << 20);
    s.cachedMb.putAll(persistedCachedMb.getOrDefault(pod, Map.of()));
    regions.forEach(r -> s.cachedMb.put(r, regionMb));
    servers.put(pod, s);
    return s;
  }

  /** The pod's RegionServer is gone: its regions go to the others, its cache persists (partly). */
  public synchronized void unregister(String pod) {
    killed.remove(pod);
    Server s = servers.remove(pod);
    if (s == null) {
      return;
    }
    persistedL2.put(pod, (long) (s.l2Used * retainOnRestart));
    persistedCachedMb.put(pod, retainOnRestart > 0 ? Map.copyOf(s.cachedMb) : Map.of());
    List<Server> others =
        servers.values().stream().filter(x -> !decommissioned.contains(x.id)).toList();
    spread(s.regions, others.isEmpty() ? List.copyOf(servers.values()) : others);
  }

  /** The L2 the pod's next RegionServer starts with (its persisted cache). */
  public synchronized void persistedL2(String pod, long bytes) {
    persistedL2.put(pod, bytes);
  }

  public synchronized Long l2Used(String pod) {
    Server s = servers.get(pod);
    return s == null ? null : s.l2Used;
  }

  public synchronized boolean registered(String pod) {
    return servers.containsKey(pod);
  }

  public synchronized List<String> regionsOf(String pod) {
    Server s = servers.get(pod);
    return s == null ? List.of() : List.copyOf(s.regions);
  }

  public synchronized Set<ServerId> marks() {
    return Set.copyOf(decommissioned);
  }

  /**
   * Data reads on a pod, counted the way HBase 2.6.4 counts them with an L2 (measured by
   * operator/hbase-it): a warm read is one data hit, a cold read two data misses.
   */
  public synchronized void reads(String pod, long warm, long cold) {
    Server s = servers.get(pod);
    s.dataHits += warm;
    s.dataMisses += 2 * cold;
  }

  /**
   * A full L2 under churn on a pod: reads, of which {@code cold} evict a block each, its L2 filled
   * to capacity, and {@code gcMillis} more GC time.
   */
  public synchronized void churn(String pod, long warm, long cold, long gcMillis) {
    Server s = servers.get(pod);
    if (s == null) {
      return;
    }
    reads(pod, warm, cold);
    s.evictions += cold;
    s.gcMillis += gcMillis;
    s.l2Used = l2Capacity - (1 << 20);
  }

  /** The RegionServers' /jmx, by pod IP. */
  /**
   * The L2 capacity every RegionServer reports. A test whose plan changes nothing about the L2 sets
   * the plan's: HBase drops a persisted L2 of another capacity at start, and the roller knows it.
   */
  public volatile long l2Capacity = 256L << 20;

  /** The L1 capacity every RegionServer reports (sizing advice compares it with the plan's). */
  public volatile long l1Capacity = 10L << 20;

  public CacheProbe probe() {
    return new CacheProbe() {
      @Override
      public CacheSample scrape(String host, int infoPort) throws IOException {
        return sample(host);
      }

      @Override
      public Long gcTimeMillis(String host, int infoPort) throws IOException {
        synchronized (SimulatedHBase.this) {
          return at(host).gcMillis;
        }
      }
    };
  }

  private Server at(String host) throws IOException {
    return servers.values().stream()
        .filter(r -> r.ip.equals(host))
        .findFirst()
        .orElseThrow(() -> new IOException("connection refused: " + host));
  }

  private synchronized CacheSample sample(String host) throws IOException {
    Server s = at(host);
    HitCounts data = new HitCounts(s.dataHits, s.dataMisses);
    scrapes++;
    return new CacheSample(
        clock.get(),
        s.id.startCode(),
        s.id.toString(),
        data,
        data,
        HitCounts.ZERO,
        data,
        1 << 20,
        l1Capacity - (1 << 20),
        s.l2Used,
        l2Capacity - s.l2Used,
        10,
        8,
        s.evictions,
        0,
        s.regions.size());
  }

  // ------------------------------------------------------------------ HBaseCluster

  @Override
  public synchronized ClusterSnapshot snapshot() {
    snapshots++;
    Instant now = clock.get();
    if (!masterReachable) {
      return ClusterSnapshot.unreachable(now, unreachableError);
    }
    List<ClusterSnapshot.ServerState> live = new ArrayList<>();
    ServerId meta = null;
    for (Server s : servers.values()) {
      live.add(
          new ClusterSnapshot.ServerState(
              s.id,
              INFO_PORT,
              s.regions,
              reported(s),
              decommissioned.contains(s.id),
              reported(s) ? s.cachedMb : Map.of(),
              reported(s) ? cachedRatios(s) : Map.of()));
      if (s.regions.contains(META)) {
        meta = s.id;
      }
    }
    return new ClusterSnapshot(
        now,
        true,
        null,
        live,
        dead,
        regionsInTransition,
        meta,
        List.copyOf(decommissioned),
        balancerOn,
        groups,
        version);
  }

  @Override
  public synchronized void drain(ServerId server, Map<String, ServerId> targets)
      throws HBaseClusterException {
    reachable();
    Server s = byId(server);
    decommissioned.add(server);
    if (targets.containsKey(META) && s.regions.contains(META)) {
      moveTo(META, byId(targets.get(META))); // first and alone
    }
    for (Map.Entry<String, ServerId> t : targets.entrySet()) {
      if (s.regions.contains(t.getKey()) && !unmovable.contains(t.getKey())) {
        Server to = byId(t.getValue());
        if (decommissioned.contains(to.id)) {
          throw new HBaseClusterException("drain: target " + to.id + " is decommissioned");
        }
        moveTo(t.getKey(), to);
      }
    }
  }

  @Override
  public synchronized RecommissionResult recommission(ServerId server, List<String> regions)
      throws HBaseClusterException {
    reachable();
    if (recommissionFails) {
      throw new HBaseClusterException("recommission refused (a test's fault)");
    }
    Server live =
        servers.values().stream().filter(x -> x.id.sameEndpoint(server)).findFirst().orElse(null);
    if (regions.isEmpty() && (live == null || !reported(live))) {
      // marks only: those of the instances at this endpoint that are gone
      List<ServerId> gone =
          decommissioned.stream()
              .filter(x -> x.sameEndpoint(server))
              .filter(x -> servers.values().stream().noneMatch(y -> y.id.equals(x)))
              .toList();
      gone.forEach(decommissioned::remove);
      return new RecommissionResult(server, List.of(), List.of(), List.of(), gone);
    }
    Server target =
        servers.values().stream()
            .filter(x -> x.id.sameEndpoint(server))
            .findFirst()
            .orElseThrow(
                () ->
                    new HBaseClusterException.NotReady(
                        server.hostAndPort() + " has not registered with the master"));
    if (!reported(target)) {
      throw new HBaseClusterException.NotReady(
          target.id + " has registered but sent no load report yet");
    }
    List<ServerId> cleared = decommissioned.stream().filter(x -> x.sameEndpoint(server)).toList();
    cleared.forEach(decommissioned::remove);
    List<String> onServer = new ArrayList<>();
    List<String> sent = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String region : regions) {
      Server at =
          servers.values().stream()
              .filter(x -> x.regions.contains(region))
              .findFirst()
              .orElse(null);
      if (at == null) {
        unknown.add(region);
      } else if (at == target) {
        onServer.add(region);
      } else {
        Server to = target;
        if (misplaceOnRecommission > 0) {
          misplaceOnRecommission--;
          to = servers.values().stream().filter(x -> x != target).findFirst().orElse(target);
        }
        moveTo(region, to);
        sent.add(region);
      }
    }
    return new RecommissionResult(target.id, onServer, sent, unknown, cleared);
  }

  @Override
  public synchronized void move(String encodedRegionName, ServerId target)
      throws HBaseClusterException {
    reachable();
    moveTo(encodedRegionName, byId(target));
  }

  @Override
  public synchronized boolean balancer(boolean on) throws HBaseClusterException {
    reachable();
    admin("balancer switch");
    boolean was = balancerOn;
    balancerOn = on;
    return was;
  }

  /**
   * As {@code AdminHBaseCluster.expire}: nothing for an instance not live, refused for one whose
   * process runs (it answers at its endpoint), else processed as dead at once.
   */
  @Override
  public synchronized ExpireResult expire(ServerId server) throws HBaseClusterException {
    reachable();
    admin("expire " + server);
    String pod =
        servers.entrySet().stream()
            .filter(e -> e.getValue().id.equals(server))
            .map(Map.Entry::getKey)
            .findFirst()
            .orElse(null);
    if (pod == null) {
      return new ExpireResult(server, ExpireResult.Outcome.NOT_LIVE, -1, null);
    }
    if (!killed.contains(pod)) {
      return new ExpireResult(server, ExpireResult.Outcome.ALIVE, -1, "it answers");
    }
    sessionExpired(pod);
    expirations++;
    return new ExpireResult(server, ExpireResult.Outcome.EXPIRED, expirations, null);
  }

  @Override
  public synchronized List<ServerId> decommissioned() throws HBaseClusterException {
    reachable();
    return List.copyOf(decommissioned);
  }

  @Override
  public void close() {
    closes++;
  }

  /** Connections closed (every connection of a test is this object). */
  public volatile int closes;

  // ------------------------------------------------------------------ helpers

  /** A served region's share cached on its server (what its load report says). */
  private Map<String, Float> cachedRatios(Server s) {
    Map<String, Float> out = new HashMap<>();
    s.regions.forEach(
        r -> out.put(r, Math.min(1f, s.cachedMb.getOrDefault(r, 0) / (float) regionMb)));
    return out;
  }

  /** The servers stopped through {@link #stopServer}, in order. */
  public final List<ServerId> stopped = new ArrayList<>();

  /** As HBase's own stop: the server leaves, its regions go to the others (like a SIGTERM). */
  @Override
  public synchronized void stopServer(ServerId server, String why) throws HBaseClusterException {
    reachable();
    admin("stop " + server);
    Server s = byId(server);
    stopped.add(server);
    servers.entrySet().stream()
        .filter(e -> e.getValue() == s)
        .map(Map.Entry::getKey)
        .findFirst()
        .ifPresent(this::unregister);
  }

  private boolean reported(Server s) {
    return !clock.get().isBefore(s.reportAt);
  }

  private Server byId(ServerId id) throws HBaseClusterException {
    return servers.values().stream()
        .filter(x -> x.id.equals(id))
        .findFirst()
        .orElseThrow(() -> new HBaseClusterException(id + " is not live"));
  }

  private void admin(String what) throws HBaseClusterException {
    if (adminDenied) {
      throw new HBaseClusterException.AccessDenied(
          what
              + " refused by HBase's ACLs: Insufficient permissions for user 'team-reader'"
              + " (global, action=ADMIN)",
          null);
    }
  }

  private void reachable() throws HBaseClusterException {
    if (!masterReachable) {
      throw new HBaseClusterException("HBase master unreachable: connection refused");
    }
  }

  /** The region closes where it is and opens on {@code to}, which caches it (prefetch). */
  private void moveTo(String region, Server to) {
    servers.values().forEach(x -> x.regions.remove(region));
    to.regions.add(region);
    to.cachedMb.put(region, regionMb);
    moves++;
  }

  /** Round-robin, the master's assignment when a server goes away. */
  private void spread(List<String> regions, List<Server> to) {
    List<String> moving = List.copyOf(regions);
    regions.clear();
    if (to.isEmpty()) {
      unassigned.addAll(moving); // no server left: assigned to the next that registers
      return;
    }
    for (int i = 0; i < moving.size(); i++) {
      moveTo(moving.get(i), to.get(i % to.size()));
    }
  }

  /** Regions of the last server to go, waiting for a server to register (the master's RIT). */
  public final List<String> unassigned = new ArrayList<>();
}
