package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.HitCounts;
import dev.hbase.cache.operator.hbase.RecommissionResult;
import dev.hbase.cache.operator.hbase.ServerId;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An HBase master and its RegionServers' JMX, in memory, for the reconciler tests: servers
 * register when the fake kubelet makes a pod Ready and vanish with the pod; regions move on
 * decommission and recommission. Thread-safe (the operator and the fake kubelet both call it).
 */
final class FakeHBase implements HBaseCluster {
  static final int PORT = 16020;

  static final class Rs {
    final ServerId id;
    final List<String> regions = new ArrayList<>();
    final String ip;
    long l2Used;
    long dataHits;
    long dataMisses;

    Rs(ServerId id, String ip) {
      this.id = id;
      this.ip = ip;
    }
  }

  private final Map<String, Rs> byPod = new LinkedHashMap<>();
  private final Set<ServerId> decommissioned = ConcurrentHashMap.newKeySet();
  private final Map<String, Long> l2ByPod = new ConcurrentHashMap<>();
  private boolean balancerOn = true;
  private long startCodes = 1;
  volatile int connects;

  synchronized void register(String pod, String host, String ip, List<String> initialRegions) {
    Rs rs = new Rs(new ServerId(host, PORT, startCodes++), ip);
    rs.regions.addAll(initialRegions);
    rs.l2Used = l2ByPod.getOrDefault(pod, 64L << 20); // persisted cache comes back
    byPod.put(pod, rs);
  }

  /** The pod is gone: its regions go to the others (the master's crash handling). */
  synchronized void unregister(String pod) {
    Rs rs = byPod.remove(pod);
    if (rs == null) {
      return;
    }
    l2ByPod.put(pod, rs.l2Used);
    List<Rs> others = new ArrayList<>(byPod.values());
    for (int i = 0; i < rs.regions.size() && !others.isEmpty(); i++) {
      others.get(i % others.size()).regions.add(rs.regions.get(i));
    }
  }

  synchronized boolean registered(String pod) {
    return byPod.containsKey(pod);
  }

  synchronized List<String> regionsOf(String pod) {
    Rs rs = byPod.get(pod);
    return rs == null ? List.of() : List.copyOf(rs.regions);
  }

  synchronized boolean balancerOn() {
    return balancerOn;
  }

  synchronized Set<ServerId> marks() {
    return Set.copyOf(decommissioned);
  }

  /**
   * Data reads on a pod, counted the way HBase 2.6.4 counts them with an L2 (measured by
   * operator/hbase-it): a warm read is one data hit, a cold read two data misses.
   */
  synchronized void reads(String pod, long warm, long cold) {
    Rs rs = byPod.get(pod);
    rs.dataHits += warm;
    rs.dataMisses += 2 * cold;
  }

  CacheProbe probe() {
    return (host, port) -> {
      synchronized (this) {
        Rs rs = byPod.values().stream().filter(r -> r.ip.equals(host)).findFirst()
            .orElseThrow(() -> new IOException("connection refused: " + host));
        HitCounts data = new HitCounts(rs.dataHits, rs.dataMisses);
        return new CacheSample(Instant.now(), rs.id.startCode(), rs.id.toString(), data, data, HitCounts.ZERO, data,
            1 << 20, 9 << 20, rs.l2Used, (256L << 20) - rs.l2Used, 10, 8, 0, 0);
      }
    };
  }

  // ------------------------------------------------------------------ HBaseCluster

  @Override
  public synchronized ClusterSnapshot snapshot() {
    List<ClusterSnapshot.ServerState> live = new ArrayList<>();
    for (Rs rs : byPod.values()) {
      live.add(new ClusterSnapshot.ServerState(rs.id, 16030, rs.regions, true, decommissioned.contains(rs.id)));
    }
    return new ClusterSnapshot(Instant.now(), true, null, live, List.of(), 0, null, List.copyOf(decommissioned), balancerOn);
  }

  @Override
  public synchronized void decommission(ServerId server, boolean offload) {
    decommissioned.add(server);
    Rs rs = byPod.values().stream().filter(r -> r.id.equals(server)).findFirst().orElse(null);
    if (rs == null || !offload) {
      return;
    }
    List<Rs> others = byPod.values().stream().filter(r -> r != rs && !decommissioned.contains(r.id)).toList();
    for (int i = 0; i < rs.regions.size(); i++) {
      others.get(i % others.size()).regions.add(rs.regions.get(i));
    }
    rs.regions.clear();
  }

  @Override
  public synchronized RecommissionResult recommission(ServerId server, List<String> regions) throws HBaseClusterException {
    decommissioned.removeIf(s -> s.sameEndpoint(server));
    Rs target = byPod.values().stream().filter(r -> r.id.sameEndpoint(server)).findFirst()
        .orElseThrow(() -> new HBaseClusterException.NotReady("no live server at " + server.hostAndPort()));
    for (String region : regions) {
      byPod.values().forEach(r -> r.regions.remove(region));
      target.regions.add(region);
    }
    return new RecommissionResult(target.id, regions, List.of(), List.of(), List.of(), List.of(server));
  }

  @Override
  public void move(String encodedRegionName, ServerId target) {
    throw new UnsupportedOperationException();
  }

  @Override
  public synchronized boolean balancer(boolean on) {
    boolean was = balancerOn;
    balancerOn = on;
    return was;
  }

  @Override
  public synchronized List<ServerId> decommissioned() {
    return List.copyOf(decommissioned);
  }

  @Override
  public void close() {}
}
