package dev.hbase.cache.operator.hbase;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the master says about the cluster at one moment: the facts the roller's gates need.
 *
 * @param at when it was read
 * @param masterReachable false when the master could not be asked (then the lists are empty and
 *     {@code error} says why)
 * @param error why the master could not be asked, else null
 * @param live live RegionServers with their regions
 * @param dead servers the master lists as dead (crashed, or stopped and not yet processed)
 * @param regionsInTransition regions being opened, closed or moved
 * @param metaServer the server hosting hbase:meta, null if unknown
 * @param decommissioned servers marked decommissioned (draining), including old instances
 * @param balancerOn whether the balancer is on, null if unknown
 * @param groups the RegionServer group of each server listed in a group other than {@code default},
 *     by {@code host:port} ({@code hbase:rsgroup}); empty when the cluster runs no RegionServer
 *     groups. A server listed nowhere is in {@link #DEFAULT_GROUP}.
 * @param masterVersion the HBase version the active HMaster reports (2.6.4, 2.5.13), null if
 *     unknown
 */
public record ClusterSnapshot(
    Instant at,
    boolean masterReachable,
    String error,
    List<ServerState> live,
    List<ServerId> dead,
    int regionsInTransition,
    ServerId metaServer,
    List<ServerId> decommissioned,
    Boolean balancerOn,
    Map<String, String> groups,
    String masterVersion) {

  /** HBase's RegionServer group of every server not listed in another one. */
  public static final String DEFAULT_GROUP = "default";

  public ClusterSnapshot {
    live = List.copyOf(live);
    dead = List.copyOf(dead);
    decommissioned = List.copyOf(decommissioned);
    groups = Map.copyOf(groups);
  }

  /** A cluster without RegionServer groups, its master's version unknown. */
  public ClusterSnapshot(
      Instant at,
      boolean masterReachable,
      String error,
      List<ServerState> live,
      List<ServerId> dead,
      int regionsInTransition,
      ServerId metaServer,
      List<ServerId> decommissioned,
      Boolean balancerOn) {
    this(
        at,
        masterReachable,
        error,
        live,
        dead,
        regionsInTransition,
        metaServer,
        decommissioned,
        balancerOn,
        Map.of(),
        null);
  }

  /**
   * The RegionServer group of the server at {@code id}'s host and port: null when the cluster runs
   * no groups, {@link #DEFAULT_GROUP} when it is listed in none.
   */
  public String groupOf(ServerId id) {
    if (groups.isEmpty()) {
      return null;
    }
    return groups.entrySet().stream()
        .filter(e -> e.getKey().equalsIgnoreCase(id.hostAndPort()))
        .map(Map.Entry::getValue)
        .findFirst()
        .orElse(DEFAULT_GROUP);
  }

  /**
   * HBase answered, but refused the operator's identity a call it needs (HBase's {@code
   * AccessDeniedException}: the identity lacks ADMIN): no state, like an unreachable master.
   */
  public boolean accessDenied() {
    return !masterReachable
        && error != null
        && error.contains("org.apache.hadoop.hbase.security.AccessDeniedException");
  }

  /** The same answer, with these servers marked decommissioned (as after a step's actions). */
  public ClusterSnapshot withDecommissioned(List<ServerId> marks) {
    return new ClusterSnapshot(
        at,
        masterReachable,
        error,
        live,
        dead,
        regionsInTransition,
        metaServer,
        marks,
        balancerOn,
        groups,
        masterVersion);
  }

  public static ClusterSnapshot unreachable(Instant at, String error) {
    return new ClusterSnapshot(at, false, error, List.of(), List.of(), 0, null, List.of(), null);
  }

  /**
   * One live RegionServer.
   *
   * @param id the instance
   * @param infoPort its info (HTTP, /jmx) port
   * @param regions encoded names of the regions it serves
   * @param reported whether the master has had a load report from this instance yet: it registers
   *     first and reports about a report interval later (3 s by default); regions sent to it before
   *     that may go elsewhere
   * @param decommissioned whether this instance is marked decommissioned
   * @param cachedMb MB of each region's blocks in its persistent BucketCache, by encoded region
   *     name, from its last load report ({@code ServerMetrics.getRegionCachedInfo()}): regions it
   *     serves <em>and</em> regions it served before (their blocks stay cached after a move with
   *     {@code hbase.rs.evictblocksonclose=false}, and survive its restarts). Empty without a
   *     persistent cache. HBase 2.6.4 counts every block cached since the start and, after a
   *     restart, the files it had cached completely (prefetched).
   * @param cachedRatio each served region's share cached here, as HBase computes it ({@code
   *     RegionMetrics.getCurrentRegionCachedRatio()}: cachedMb over the region's size), from the
   *     last load report
   */
  public record ServerState(
      ServerId id,
      int infoPort,
      List<String> regions,
      boolean reported,
      boolean decommissioned,
      Map<String, Integer> cachedMb,
      Map<String, Float> cachedRatio) {

    public ServerState {
      regions = List.copyOf(regions);
      cachedMb = Map.copyOf(cachedMb);
      cachedRatio = Map.copyOf(cachedRatio);
    }

    /** A server whose cache holds nothing the master was told about. */
    public ServerState(
        ServerId id, int infoPort, List<String> regions, boolean reported, boolean decommissioned) {
      this(id, infoPort, regions, reported, decommissioned, Map.of(), Map.of());
    }

    public int regionCount() {
      return regions.size();
    }

    /** MB of the region's blocks in this server's cache (0: none reported). */
    public int cachedMb(String encodedRegion) {
      return cachedMb.getOrDefault(encodedRegion, 0);
    }
  }

  /** The live instance at host:port (a pod's RegionServer, whatever its start code). */
  public Optional<ServerState> liveAt(String host, int port) {
    return live.stream().filter(s -> s.id().sameEndpoint(host, port)).findFirst();
  }

  public Optional<ServerState> live(ServerId id) {
    return live.stream().filter(s -> s.id().equals(id)).findFirst();
  }

  /** Which live server holds each region (encoded name). */
  public Map<String, ServerId> locations() {
    Map<String, ServerId> where = new java.util.HashMap<>();
    live.forEach(s -> s.regions().forEach(r -> where.put(r, s.id())));
    return where;
  }

  public boolean hostsMeta(ServerId id) {
    return metaServer != null && metaServer.sameEndpoint(id);
  }

  /** Master reachable, nothing in transition, no dead servers, and the expected live count. */
  public boolean healthy(int expectedLiveServers) {
    return masterReachable
        && regionsInTransition == 0
        && dead.isEmpty()
        && live.size() == expectedLiveServers;
  }
}
