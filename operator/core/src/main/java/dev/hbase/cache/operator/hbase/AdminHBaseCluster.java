package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.ClusterMetrics.Option;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link HBaseCluster} on the HBase Admin API (hbase-shaded-client), with short client timeouts
 * and few retries so that a dead master makes calls fail in seconds.
 *
 * <p>What a hand-run on HBase 2.6.4 showed and this class handles: {@code
 * recommissionRegionServer} succeeds but sends the regions to random servers when called before
 * the restarted instance (same host and port, new start code) has registered and sent its first
 * load report, so {@link #recommission} waits for that, then checks where each region landed and
 * moves stragglers; the decommission mark belongs to the old instance's name and is cleared
 * explicitly; hbase:meta is moved alone.
 */
public final class AdminHBaseCluster implements HBaseCluster {

  private static final Logger LOG = LoggerFactory.getLogger(AdminHBaseCluster.class);
  static final String META_ENCODED = RegionInfoBuilder.FIRST_META_REGIONINFO.getEncodedName();

  /**
   * Client timeouts and the bounded waits of {@link #recommission}.
   *
   * @param rpcTimeout one RPC (a region move RPC waits for the move)
   * @param operationTimeout one client operation, retries included
   * @param retries client retries per operation
   * @param connectTimeout TCP connect to a master or RegionServer
   * @param registrationWait how long recommission waits for the new instance's first load report
   * @param settleTimeout how long recommission waits for regions to land before moving stragglers
   * @param pollInterval polling period of those waits
   */
  public record Options(
      Duration rpcTimeout,
      Duration operationTimeout,
      int retries,
      Duration connectTimeout,
      Duration registrationWait,
      Duration settleTimeout,
      Duration pollInterval) {

    public static Options defaults() {
      return new Options(
          Duration.ofSeconds(10),
          Duration.ofSeconds(20),
          2,
          Duration.ofSeconds(2),
          Duration.ofSeconds(10),
          Duration.ofSeconds(30),
          Duration.ofMillis(250));
    }
  }

  private final Connection connection;
  private final Admin admin;
  private final Options options;
  private final Clock clock;

  private AdminHBaseCluster(Connection connection, Options options, Clock clock) throws IOException {
    this.connection = connection;
    this.admin = connection.getAdmin();
    this.options = options;
    this.clock = clock;
  }

  /**
   * Connects with the given client settings (at least {@code hbase.zookeeper.quorum}, usually also
   * {@code hbase.zookeeper.property.clientPort} and {@code zookeeper.znode.parent}).
   */
  public static AdminHBaseCluster connect(Map<String, String> settings, Options options)
      throws HBaseClusterException {
    try {
      return new AdminHBaseCluster(
          ConnectionFactory.createConnection(configuration(settings, options)),
          options,
          Clock.systemUTC());
    } catch (IOException | RuntimeException e) {
      throw new HBaseClusterException("cannot create an HBase connection: " + e, e);
    }
  }

  /** The client configuration: the settings, then the fail-fast timeouts of the options. */
  static Configuration configuration(Map<String, String> settings, Options o) {
    Configuration conf = HBaseConfiguration.create();
    settings.forEach(conf::set);
    conf.setInt("hbase.client.retries.number", o.retries());
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", millis(o.rpcTimeout()));
    conf.setInt("hbase.client.operation.timeout", millis(o.operationTimeout()));
    conf.setInt("hbase.client.meta.operation.timeout", millis(o.operationTimeout()));
    conf.setInt("hbase.client.sync.wait.timeout.msec", millis(o.operationTimeout()));
    conf.setInt("hbase.ipc.client.socket.timeout.connect", millis(o.connectTimeout()));
    conf.setInt("zookeeper.recovery.retry", 1);
    conf.setInt("zookeeper.recovery.retry.intervalmill", 200);
    conf.setInt("zookeeper.session.timeout", millis(o.operationTimeout()));
    return conf;
  }

  private static int millis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
  }

  @Override
  public ClusterSnapshot snapshot() {
    Instant at = clock.instant();
    try {
      ClusterMetrics metrics =
          admin.getClusterMetrics(
              EnumSet.of(
                  Option.LIVE_SERVERS,
                  Option.DEAD_SERVERS,
                  Option.REGIONS_IN_TRANSITION,
                  Option.BALANCER_ON));
      Set<ServerName> drained = new LinkedHashSet<>(admin.listDecommissionedRegionServers());
      List<ServerState> live = new ArrayList<>();
      ServerId meta = null;
      for (Map.Entry<ServerName, ServerMetrics> e : metrics.getLiveServerMetrics().entrySet()) {
        ServerName sn = e.getKey();
        List<String> regions = regionsOn(sn, e.getValue());
        if (regions.contains(META_ENCODED)) {
          meta = id(sn);
        }
        live.add(
            new ServerState(
                id(sn),
                e.getValue().getInfoServerPort(),
                regions,
                e.getValue().getLastReportTimestamp() > 0,
                drained.contains(sn)));
      }
      live.sort(Comparator.comparing((ServerState s) -> s.id().host()).thenComparing(s -> s.id().port()));
      return new ClusterSnapshot(
          at,
          true,
          null,
          live,
          metrics.getDeadServerNames().stream().map(AdminHBaseCluster::id).toList(),
          metrics.getRegionStatesInTransition().size(),
          meta,
          drained.stream().map(AdminHBaseCluster::id).toList(),
          metrics.getBalancerOn());
    } catch (IOException | RuntimeException e) {
      return ClusterSnapshot.unreachable(at, e.toString());
    }
  }

  /**
   * Encoded names of the server's regions, sorted: the server's own list (exact), or its last load
   * report's (up to a report interval old) if the server does not answer.
   */
  private List<String> regionsOn(ServerName sn, ServerMetrics reported) {
    try {
      return admin.getRegions(sn).stream().map(RegionInfo::getEncodedName).sorted().toList();
    } catch (IOException e) {
      LOG.debug("regions of {} from its last load report: {}", sn, e.toString());
      return reported.getRegionMetrics().keySet().stream()
          .map(RegionInfo::encodeRegionName)
          .sorted()
          .toList();
    }
  }

  @Override
  public void decommission(ServerId server, boolean offload) throws HBaseClusterException {
    ClusterSnapshot snap = reachableSnapshot();
    ServerState target =
        snap.live(server)
            .orElseThrow(() -> new HBaseClusterException("decommission: " + server + " is not live"));
    if (offload && snap.hostsMeta(server)) {
      ServerState to =
          snap.live().stream()
              .filter(s -> !s.id().sameEndpoint(server) && !s.decommissioned())
              .min(Comparator.comparingInt(ServerState::regionCount))
              .orElseThrow(
                  () -> new HBaseClusterException("decommission: no other server to take hbase:meta"));
      LOG.info("moving hbase:meta alone from {} to {} before offloading", server, to.id());
      move(META_ENCODED, to.id());
    }
    call(
        "decommission " + server,
        () -> {
          admin.decommissionRegionServers(List.of(name(target.id())), offload);
          return null;
        });
  }

  @Override
  public RecommissionResult recommission(ServerId server, List<String> encodedRegionNames)
      throws HBaseClusterException {
    ServerState target = awaitReported(server.host(), server.port());
    ServerName targetName = name(target.id());

    // The decommission mark was set on the old instance's name, not on this one. A local 2.6.4
    // cluster had dropped it (list and znode) by the time the old instance was gone; on kind it was
    // seen to linger. Clearing it by name is harmless either way (the master deletes the znode if
    // present and removes the name from its list), so clear the old name and any other listed
    // instance at this host:port.
    Set<ServerName> oldNames = new LinkedHashSet<>();
    if (!server.equals(target.id())) {
      oldNames.add(name(server));
    }
    for (ServerName marked : call("list decommissioned", admin::listDecommissionedRegionServers)) {
      if (id(marked).sameEndpoint(server) && !marked.equals(targetName)) {
        oldNames.add(marked);
      }
    }
    List<ServerId> cleared = new ArrayList<>();
    for (ServerName marked : oldNames) {
      call(
          "clear decommission mark of " + marked,
          () -> {
            admin.recommissionRegionServer(marked, List.of());
            return null;
          });
      cleared.add(id(marked));
    }

    Map<String, ServerId> before = locations();
    List<String> unknown = new ArrayList<>();
    List<String> wanted = new ArrayList<>();
    for (String region : new LinkedHashSet<>(encodedRegionNames)) {
      if (before.containsKey(region)) {
        wanted.add(region);
      } else {
        unknown.add(region);
      }
    }
    List<String> batch =
        wanted.stream()
            .filter(r -> !r.equals(META_ENCODED) && !target.id().equals(before.get(r)))
            .toList();
    boolean targetMarked = snapshotDecommissioned(targetName);
    call(
        "recommission " + targetName,
        () -> {
          admin.recommissionRegionServer(
              targetName, batch.stream().map(AdminHBaseCluster::bytes).toList());
          return null;
        });
    if (targetMarked) {
      cleared.add(target.id());
    }

    // the master moves them in the background: wait for them to land, then move stragglers
    Map<String, ServerId> where = awaitSettled(batch, target.id());
    List<String> movedAgain = new ArrayList<>();
    for (String region : batch) {
      if (!target.id().equals(where.get(region))) {
        LOG.info("region {} landed on {}, not {}: moving it", region, where.get(region), target.id());
        moveQuietly(region, target.id());
        movedAgain.add(region);
      }
    }
    if (wanted.contains(META_ENCODED) && !target.id().equals(where.get(META_ENCODED))) {
      LOG.info("moving hbase:meta alone to {}", target.id());
      moveQuietly(META_ENCODED, target.id());
    }

    where = locations();
    List<String> onServer = new ArrayList<>();
    List<String> notPlaced = new ArrayList<>();
    for (String region : wanted) {
      (target.id().equals(where.get(region)) ? onServer : notPlaced).add(region);
    }
    return new RecommissionResult(target.id(), onServer, movedAgain, notPlaced, unknown, cleared);
  }

  @Override
  public void move(String encodedRegionName, ServerId target) throws HBaseClusterException {
    call(
        "move " + encodedRegionName + " to " + target,
        () -> {
          admin.move(bytes(encodedRegionName), name(target));
          return null;
        });
  }

  /**
   * Asynchronous switch: the master flips the flag and answers. The synchronous one waits for the
   * balancer's lock, which HMaster.balance holds for its whole run; with the
   * CacheAwareLoadBalancer (what the planner configures for PersistentFile) that run sleeps
   * {@code hbase.master.balancer.move.throttlingMillis} (60 s) after each move without cache
   * affinity, up to {@code hbase.balancer.max.balancing} (the balancer period, 5 min). Seen on
   * kind: after a roll switched the balancer back on, the next roll's "balancer off" timed out
   * for ~4.5 min, each retry parking one more master RPC handler on that lock until the master
   * stopped answering the operator's other calls. A balance already running finishes its plan
   * list; no new one starts.
   */
  @Override
  public boolean balancer(boolean on) throws HBaseClusterException {
    return call("balancer " + (on ? "on" : "off"), () -> admin.balancerSwitch(on, false));
  }

  @Override
  public List<ServerId> decommissioned() throws HBaseClusterException {
    return call("list decommissioned", admin::listDecommissionedRegionServers).stream()
        .map(AdminHBaseCluster::id)
        .toList();
  }

  @Override
  public void close() {
    try {
      admin.close();
      connection.close();
    } catch (IOException e) {
      LOG.debug("closing the HBase connection: {}", e.toString());
    }
  }

  /** The live instance at host:port once the master has its first load report; else NotReady. */
  private ServerState awaitReported(String host, int port) throws HBaseClusterException {
    Instant deadline = clock.instant().plus(options.registrationWait());
    while (true) {
      ClusterSnapshot snap = reachableSnapshot();
      Optional<ServerState> s = snap.liveAt(host, port);
      if (s.isPresent() && s.get().reported()) {
        return s.get();
      }
      if (!clock.instant().isBefore(deadline)) {
        throw new HBaseClusterException.NotReady(
            host + ":" + port
                + (s.isPresent()
                    ? " (" + s.get().id() + ") has registered but sent no load report yet"
                    : " has not registered with the master"));
      }
      pause();
    }
  }

  /** Region locations once none of the regions is in transition, or at the settle timeout. */
  private Map<String, ServerId> awaitSettled(List<String> regions, ServerId target)
      throws HBaseClusterException {
    Instant deadline = clock.instant().plus(options.settleTimeout());
    Set<String> wanted = Set.copyOf(regions);
    while (true) {
      Map<String, ServerId> where = locations();
      boolean allThere = regions.stream().allMatch(r -> target.equals(where.get(r)));
      boolean moving =
          call(
                  "regions in transition",
                  () -> admin.getClusterMetrics(EnumSet.of(Option.REGIONS_IN_TRANSITION)))
              .getRegionStatesInTransition()
              .stream()
              .anyMatch(rs -> wanted.contains(rs.getRegion().getEncodedName()));
      if (allThere || !moving || !clock.instant().isBefore(deadline)) {
        return where;
      }
      pause();
    }
  }

  /** Encoded region name to the live server that serves it, as the servers themselves say. */
  private Map<String, ServerId> locations() throws HBaseClusterException {
    ClusterSnapshot snap = reachableSnapshot();
    Map<String, ServerId> where = new HashMap<>();
    for (ServerState s : snap.live()) {
      s.regions().forEach(r -> where.put(r, s.id()));
    }
    return where;
  }

  private boolean snapshotDecommissioned(ServerName sn) throws HBaseClusterException {
    return call("list decommissioned", admin::listDecommissionedRegionServers).contains(sn);
  }

  private void moveQuietly(String region, ServerId target) {
    try {
      move(region, target);
    } catch (HBaseClusterException e) {
      LOG.warn("{}", e.getMessage());
    }
  }

  private ClusterSnapshot reachableSnapshot() throws HBaseClusterException {
    ClusterSnapshot snap = snapshot();
    if (!snap.masterReachable()) {
      throw new HBaseClusterException("HBase master unreachable: " + snap.error());
    }
    return snap;
  }

  private void pause() throws HBaseClusterException {
    try {
      Thread.sleep(options.pollInterval().toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HBaseClusterException("interrupted", e);
    }
  }

  private interface AdminCall<T> {
    T run() throws IOException;
  }

  private static <T> T call(String what, AdminCall<T> c) throws HBaseClusterException {
    try {
      return c.run();
    } catch (IOException | RuntimeException e) {
      throw new HBaseClusterException(what + " failed: " + e, e);
    }
  }

  /** Encoded region names are ASCII (hex digits, or meta's "1588230740"). */
  private static byte[] bytes(String encodedRegionName) {
    return encodedRegionName.getBytes(StandardCharsets.US_ASCII);
  }

  static ServerId id(ServerName sn) {
    return new ServerId(sn.getHostname(), sn.getPort(), sn.getStartCode());
  }

  static ServerName name(ServerId id) {
    return ServerName.valueOf(id.host(), id.port(), id.startCode());
  }
}
