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
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
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
 * {@link HBaseCluster} on the HBase Admin API (hbase-shaded-client), with short client timeouts and
 * few retries so that a dead master makes calls fail in seconds.
 *
 * <p>What a hand-run on HBase 2.6.4 showed and this class handles: {@code recommissionRegionServer}
 * succeeds but sends the regions to random servers when called before the restarted instance (same
 * host and port, new start code) has registered and sent its first load report, so {@link
 * #recommission} refuses to send before that (the roller waits for the report, then checks where
 * each region landed and sends stragglers again); the decommission mark belongs to the old
 * instance's name and is cleared explicitly; hbase:meta is moved alone.
 *
 * <p>Why ~550 lines in one class: it is the one place that speaks HBase's Admin API (the import
 * rules keep the HBase client out of the rest of the operator), and each of its methods is one call
 * with its timeouts, retries and the error it turns into an {@code HBaseClusterException}.
 */
public final class AdminHBaseCluster implements HBaseCluster {

  private static final Logger LOG = LoggerFactory.getLogger(AdminHBaseCluster.class);
  static final String META_ENCODED = RegionInfoBuilder.FIRST_META_REGIONINFO.getEncodedName();

  /**
   * Client timeouts: every call fails within seconds when HBase does not answer.
   *
   * @param rpcTimeout one RPC (a region move RPC waits for the move)
   * @param operationTimeout one client operation, retries included
   * @param retries client retries per operation
   * @param connectTimeout TCP connect to a master or RegionServer
   * @param moves how regions are sent to a named server
   */
  public record Options(
      Duration rpcTimeout,
      Duration operationTimeout,
      int retries,
      Duration connectTimeout,
      Moves moves,
      BooleanSupplier leading) {

    public static Options defaults() {
      return new Options(
          Duration.ofSeconds(10),
          Duration.ofSeconds(20),
          2,
          Duration.ofSeconds(2),
          Moves.WARM,
          () -> true);
    }

    public Options withMoves(Moves m) {
      return new Options(rpcTimeout, operationTimeout, retries, connectTimeout, m, leading);
    }

    /**
     * Whether this operator leads (its leader lease held): background moves queued before it lost
     * the lease are not sent ({@link WarmMoves}).
     */
    public Options withLeading(BooleanSupplier l) {
      return new Options(rpcTimeout, operationTimeout, retries, connectTimeout, moves, l);
    }
  }

  /** How the drain and the reload send regions to a named server. */
  public enum Moves {
    /**
     * {@code recommissionRegionServer(target, regions)}: one call per target that returns at once;
     * the master closes each region on its server and opens it on the target, nothing prepared.
     */
    BATCH,
    /** One {@code Admin.move} per region in the background, warmed up first ({@link WarmMoves}). */
    WARM
  }

  /**
   * A move's client call (its own connection, {@link Moves#WARM}): it waits in the master until the
   * region is open on its target, after the warm-up. Not retried: a second try finds the region in
   * transition and fails, and the thread would start the next move while the master still runs the
   * first.
   */
  static final Duration MOVE_TIMEOUT = Duration.ofMinutes(2);

  private final Connection connection;
  private final Admin admin;
  private final Options options;
  private final Clock clock;

  /** {@link Moves#WARM}: the moves queued and running (null with {@link Moves#BATCH}). */
  private final WarmMoves warm;

  /** The connection of the warm moves (null with {@link Moves#BATCH}). */
  private final Connection moveConnection;

  /** Where the warm moves' check of the live servers waits for a call slot. */
  private volatile CallGate gate = CallGate.OPEN;

  /**
   * The call slots of the connection's namespace, for the calls that run outside the caller's
   * thread (the warm moves' check of the live servers).
   */
  public void gate(CallGate g) {
    this.gate = g;
  }

  private AdminHBaseCluster(
      Connection connection, Connection moveConnection, Options options, Clock clock)
      throws IOException {
    this.connection = connection;
    this.admin = connection.getAdmin();
    this.options = options;
    this.clock = clock;
    this.moveConnection = moveConnection;
    this.warm =
        moveConnection == null
            ? null
            : new WarmMoves(
                options.leading(),
                new WarmMoves.Master() {
                  @Override
                  public java.util.Collection<ServerId> takers() throws IOException {
                    CallGate.Held slot = gate.enter();
                    try (Admin a = moveConnection.getAdmin()) {
                      // not getRegionServers(true): it filters with List.contains (quadratic)
                      return AdminHBaseCluster.takers(
                          a.getClusterMetrics(EnumSet.of(Option.SERVERS_NAME)).getServersName(),
                          a.listDecommissionedRegionServers());
                    } finally {
                      slot.close();
                    }
                  }

                  @Override
                  public void move(String encodedRegionName, ServerId target) throws IOException {
                    try (Admin a = moveConnection.getAdmin()) {
                      a.move(bytes(encodedRegionName), name(target));
                    }
                  }
                });
  }

  /** Over a connection already made (tests): {@link Moves#BATCH}, the system clock. */
  static AdminHBaseCluster over(Connection connection, Options options) throws IOException {
    return new AdminHBaseCluster(connection, null, options, Clock.systemUTC());
  }

  /**
   * The most live RegionServers a snapshot (and the warm moves' check of the takers) reads. The
   * largest HBase clusters run a few thousand RegionServers (most run tens to hundreds); 5,000 is
   * above them, and a master that lists more is refused rather than asked that many times. Each
   * server is one {@code getRegions} call (within the snapshot's deadline) and one {@code
   * ServerState}: the regions they hold are bounded by {@link #MAX_REGIONS}.
   */
  static final int MAX_SERVERS = 5_000;

  /**
   * The most region names one snapshot keeps, all servers together (about 60 bytes each: 12 MiB at
   * most). The chart's heap (358 MiB) takes the master's load reports of about 24,000 regions
   * within its answer weight limit anyway, so a cluster that reaches this has regions no real
   * policy rolls; the budget stops a master that lists many servers, each naming tens of thousands
   * of regions (each answer within the weight limit), from filling the heap.
   */
  static final int MAX_REGIONS = 200_000;

  /**
   * Why a snapshot of {@code servers} live servers holding {@code regions} region names so far is
   * refused, or null when it is within the budget ({@link #MAX_SERVERS}, {@link #MAX_REGIONS}).
   */
  static String overBudget(int servers, long regions) {
    if (servers > MAX_SERVERS) {
      return "the master lists "
          + servers
          + " live RegionServers, more than the "
          + MAX_SERVERS
          + " the operator reads: snapshot not taken";
    }
    if (regions > MAX_REGIONS) {
      return "the live RegionServers hold more than "
          + MAX_REGIONS
          + " regions, the most the operator keeps in a snapshot: snapshot not taken";
    }
    return null;
  }

  /**
   * The servers that can take regions: the master's servers but the decommissioned ones, filtered
   * through a hash set; refused past {@link #MAX_SERVERS} on either list.
   */
  static List<ServerId> takers(
      java.util.Collection<ServerName> servers, java.util.Collection<ServerName> decommissioned)
      throws IOException {
    int most = Math.max(servers.size(), decommissioned.size());
    if (most > MAX_SERVERS) {
      throw new IOException(
          "the master lists "
              + most
              + " RegionServers, more than the "
              + MAX_SERVERS
              + " the operator reads: no takers");
    }
    Set<ServerName> gone = new java.util.HashSet<>(decommissioned);
    return servers.stream().filter(s -> !gone.contains(s)).map(AdminHBaseCluster::id).toList();
  }

  /** A snapshot past its budget ({@link #overBudget}). */
  private static final class OverBudget extends RuntimeException {
    OverBudget(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Connects with the given client settings (at least {@code hbase.zookeeper.quorum}, usually also
   * {@code hbase.zookeeper.property.clientPort} and {@code zookeeper.znode.parent}).
   */
  public static AdminHBaseCluster connect(Map<String, String> settings, Options options)
      throws HBaseClusterException {
    return connect(settings, options, null);
  }

  /**
   * Same, as the given Kerberos identity (null: the process's user, as for an unsecured cluster).
   * The settings then say how the cluster is secured ({@code hbase.security.authentication}, {@code
   * hbase.rpc.protection}, the servers' principals).
   */
  public static AdminHBaseCluster connect(
      Map<String, String> settings, Options options, KerberosLogin login)
      throws HBaseClusterException {
    List<Connection> made = new ArrayList<>();
    try {
      Configuration moves = configuration(settings, options);
      moves.setInt("hbase.client.retries.number", 0);
      moves.setInt("hbase.rpc.timeout", millis(MOVE_TIMEOUT));
      moves.setInt("hbase.client.operation.timeout", millis(MOVE_TIMEOUT));
      made.add(connection(configuration(settings, options), login));
      if (options.moves() == Moves.WARM) {
        made.add(connection(moves, login));
      }
      return new AdminHBaseCluster(
          made.get(0), made.size() > 1 ? made.get(1) : null, options, Clock.systemUTC());
    } catch (IOException | RuntimeException e) {
      // the first made when the second failed is closed: a failed connect leaves no threads
      for (Connection c : made) {
        try {
          c.close();
        } catch (IOException | RuntimeException closing) {
          LOG.debug("closing a half-made HBase connection: {}", closing.toString());
        }
      }
      throw new HBaseClusterException("cannot create an HBase connection: " + e, e);
    }
  }

  private static Connection connection(Configuration conf, KerberosLogin login) throws IOException {
    PerUserSaslSelector.install(conf);
    return login == null
        ? ConnectionFactory.createConnection(conf)
        : ConnectionFactory.createConnection(conf, login.user());
  }

  /** The client configuration: the settings, then the fail-fast timeouts of the options. */
  static Configuration configuration(Map<String, String> settings, Options o) {
    Configuration conf = PerUserSaslSelector.select(HBaseConfiguration.create());
    settings.forEach(conf::set);
    RpcAnswerCap.install(conf); // after the settings: the client is the operator's, capped
    BoundedZkRegistry.install(conf); // and finds the cluster in ZooKeeper with bounded reads
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
      String unresolved = unresolvedMaster();
      if (unresolved != null) {
        return ClusterSnapshot.unreachable(at, "the active master: " + unresolved);
      }
      ClusterMetrics metrics =
          admin.getClusterMetrics(
              EnumSet.of(
                  Option.LIVE_SERVERS,
                  Option.DEAD_SERVERS,
                  Option.REGIONS_IN_TRANSITION,
                  Option.BALANCER_ON,
                  Option.HBASE_VERSION));
      Map<String, String> groups = RegionServerGroups.read(connection);
      Set<ServerName> drained = new LinkedHashSet<>(admin.listDecommissionedRegionServers());
      List<ServerState> live = new ArrayList<>();
      ServerId meta = null;
      // One reconcile's HBase work has a deadline: past it, the remaining servers' regions come
      // from their last load report (a slow server does not hold the roll for rpcTimeout each).
      Instant deadline = at.plus(options.operationTimeout());
      Map<ServerName, ServerMetrics> reports = metrics.getLiveServerMetrics();
      // a budget per snapshot: so many servers, so many region names kept in all
      String refused = overBudget(reports.size(), 0);
      if (refused != null) {
        return ClusterSnapshot.unreachable(at, refused);
      }
      long kept = 0;
      for (Map.Entry<ServerName, ServerMetrics> e : reports.entrySet()) {
        ServerName sn = e.getKey();
        List<String> regions =
            clock.instant().isBefore(deadline)
                ? regionsOn(sn, e.getValue(), MAX_REGIONS - kept)
                : reportedRegions(e.getValue());
        kept += regions.size();
        refused = overBudget(reports.size(), kept);
        if (refused != null) {
          return ClusterSnapshot.unreachable(at, refused);
        }
        if (regions.contains(META_ENCODED)) {
          meta = id(sn);
        }
        live.add(
            new ServerState(
                id(sn),
                e.getValue().getInfoServerPort(),
                regions,
                e.getValue().getLastReportTimestamp() > 0,
                drained.contains(sn),
                Objects.requireNonNullElse(e.getValue().getRegionCachedInfo(), Map.of()),
                cachedRatios(e.getValue())));
      }
      live.sort(
          Comparator.comparing((ServerState s) -> s.id().host()).thenComparing(s -> s.id().port()));
      return new ClusterSnapshot(
          at,
          true,
          null,
          live,
          metrics.getDeadServerNames().stream().map(AdminHBaseCluster::id).toList(),
          metrics.getRegionStatesInTransition().size(),
          meta,
          drained.stream().map(AdminHBaseCluster::id).toList(),
          metrics.getBalancerOn(),
          groups,
          metrics.getHBaseVersion());
    } catch (OverBudget e) {
      return ClusterSnapshot.unreachable(at, e.getMessage());
    } catch (IOException | RuntimeException e) {
      return ClusterSnapshot.unreachable(at, e.toString());
    }
  }

  /**
   * Encoded names of the server's regions, sorted: the server's own list (exact), or its last load
   * report's (up to a report interval old) if the server does not answer. More than {@code room}
   * regions (what the snapshot's budget has left) fail the snapshot before any name is kept.
   */
  private List<String> regionsOn(ServerName sn, ServerMetrics reported, long room) {
    if (!resolves(sn.getHostname())) {
      return reportedRegions(reported);
    }
    try {
      List<RegionInfo> answer = admin.getRegions(sn);
      if (answer.size() > room) {
        throw new OverBudget(
            sn
                + " lists "
                + answer.size()
                + " regions: the live RegionServers hold more than "
                + MAX_REGIONS
                + " regions, the most the operator keeps in a snapshot: snapshot not taken");
      }
      return answer.stream().map(RegionInfo::getEncodedName).sorted().toList();
    } catch (IOException e) {
      LOG.debug("regions of {} from its last load report: {}", sn, e.toString());
      return reportedRegions(reported);
    }
  }

  /**
   * Why the active master is not asked, null if it may be: the registry ({@link BoundedZkRegistry})
   * resolves the master's name from ZooKeeper on its own thread, before the client connects to it
   * on the shared event loop, and refuses a name that does not resolve; asked here first (no RPC)
   * so that the snapshot says so instead of HBase's retries. Null too when ZooKeeper does not say
   * within the operation timeout (the master call then fails its own way).
   */
  private String unresolvedMaster() {
    try {
      ((org.apache.hadoop.hbase.client.ClusterConnection) connection)
          .getConnectionRegistry()
          .getActiveMaster()
          .get(options.operationTimeout().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof BoundedZkRegistry.Unresolved u) {
        return u.getMessage();
      }
      LOG.debug("the active master from ZooKeeper: {}", e.toString());
      return null;
    } catch (java.util.concurrent.TimeoutException | RuntimeException e) {
      LOG.debug("the active master from ZooKeeper: {}", e.toString());
      return null;
    }
  }

  /**
   * Resolves a server's name on the calling thread (this connection's own), before HBase's client
   * connects to it: the client resolves it on its Netty event loop, which other clusters'
   * connections share, so a name the master lists (a tenant's) that resolves slowly would hold them
   * there. Resolved here it is in the JVM's cache for the connect ({@code
   * networkaddress.cache.ttl}, 1 s); a name that does not resolve is not cached, and not asked.
   */
  static boolean resolves(String host) {
    try {
      java.net.InetAddress.getByName(host);
      return true;
    } catch (java.net.UnknownHostException e) {
      LOG.debug("{} does not resolve: not asked", host);
      return false;
    }
  }

  private static Map<String, Float> cachedRatios(ServerMetrics reported) {
    Map<String, Float> out = new HashMap<>();
    reported
        .getRegionMetrics()
        .forEach(
            (name, m) ->
                out.put(RegionInfo.encodeRegionName(name), m.getCurrentRegionCachedRatio()));
    return out;
  }

  private static List<String> reportedRegions(ServerMetrics reported) {
    return reported.getRegionMetrics().keySet().stream()
        .map(RegionInfo::encodeRegionName)
        .sorted()
        .toList();
  }

  /**
   * Marks the server decommissioned without offload (the master sends nothing there any more and
   * moves nothing off it by itself), then sends each listed region to its target: hbase:meta first
   * and alone (waiting for that move), the others in the background ({@link #send}). A region
   * already in transition, or being sent by this client, is not sent again. Returns at once; the
   * roller looks again.
   */
  @Override
  public void drain(ServerId server, Map<String, ServerId> targets) throws HBaseClusterException {
    ClusterSnapshot snap = reachableSnapshot();
    ServerState source =
        snap.live(server)
            .orElseThrow(() -> new HBaseClusterException("drain: " + server + " is not live"));
    if (!source.decommissioned()) {
      call(
          "decommission " + server,
          () -> {
            admin.decommissionRegionServers(List.of(name(source.id())), false);
            return null;
          });
    }
    Set<String> moving = inTransition();
    ServerId metaTarget = targets.get(META_ENCODED);
    if (metaTarget != null
        && source.regions().contains(META_ENCODED)
        && !moving.contains(META_ENCODED)) {
      LOG.info(
          "moving hbase:meta alone from {} to {} before the other regions", server, metaTarget);
      move(META_ENCODED, metaTarget);
    }
    Map<ServerId, List<String>> batches = new TreeMap<>(Comparator.comparing(ServerId::toString));
    targets.forEach(
        (region, target) -> {
          // a target marked since the plan is skipped: the call below would clear its mark (the
          // roller sends what is left again with new targets)
          if (!region.equals(META_ENCODED)
              && source.regions().contains(region)
              && !moving.contains(region)
              && !snap.decommissioned().contains(target)) {
            batches.computeIfAbsent(target, t -> new ArrayList<>()).add(region);
          }
        });
    for (Map.Entry<ServerId, List<String>> b : batches.entrySet()) {
      List<String> regions = b.getValue().stream().sorted().toList();
      LOG.info("sending {} regions of {} to {}: {}", regions.size(), server, b.getKey(), regions);
      send(b.getKey(), regions);
    }
  }

  /**
   * Sends the regions to the target without waiting ({@link Options#moves()}): one {@code
   * recommissionRegionServer(target, regions)} call ({@link Moves#BATCH}; it would also clear the
   * target's own mark), or one warmed-up move per region in the background ({@link Moves#WARM}: a
   * failed one is logged and sent again by the roller, which finds the region still where it was).
   */
  private void send(ServerId target, List<String> regions) throws HBaseClusterException {
    send(target, regions, false, true);
  }

  /**
   * {@link #send(ServerId, List)}; {@code fresh}: the target has just started (a reload, a
   * homecoming), and its first region goes alone ({@link WarmMoves#sendFirstAlone}) unless it
   * {@code servesRegions} already by the master's report.
   */
  private void send(ServerId target, List<String> regions, boolean fresh, boolean servesRegions)
      throws HBaseClusterException {
    if (regions.isEmpty()) {
      return;
    }
    if (warm != null) {
      if (fresh) {
        warm.sendFirstAlone(target, regions, servesRegions);
      } else {
        warm.send(target, regions);
      }
      return;
    }
    call(
        "move " + regions.size() + " regions to " + target,
        () -> {
          admin.recommissionRegionServer(
              name(target), regions.stream().map(AdminHBaseCluster::bytes).toList());
          return null;
        });
  }

  @Override
  public RecommissionResult recommission(ServerId server, List<String> encodedRegionNames)
      throws HBaseClusterException {
    ClusterSnapshot snap = reachableSnapshot();
    Optional<ServerState> live = snap.liveAt(server.host(), server.port());
    if (encodedRegionNames.isEmpty() && (live.isEmpty() || !live.get().reported())) {
      // marks only (a roll blocked on a pod that does not come back, a policy deleted mid-roll):
      // the instances at this host and port that are gone lose theirs; nothing needs the new one
      List<ServerId> cleared = new ArrayList<>();
      for (ServerId m : snap.decommissioned()) {
        if (m.sameEndpoint(server) && snap.live(m).isEmpty()) {
          call(
              "clear decommission mark of " + m,
              () -> {
                admin.recommissionRegionServer(name(m), List.of());
                return null;
              });
          cleared.add(m);
        }
      }
      return new RecommissionResult(server, List.of(), List.of(), List.of(), cleared);
    }
    if (live.isEmpty() || !live.get().reported()) {
      throw new HBaseClusterException.NotReady(
          server.hostAndPort()
              + (live.isPresent()
                  ? " (" + live.get().id() + ") has registered but sent no load report yet"
                  : " has not registered with the master"));
    }
    ServerState target = live.get();
    ServerName targetName = name(target.id());
    if (warm != null) {
      // a drain given up (timed out, held): its queued moves do not take the regions away again
      List<String> cancelled = warm.cancelUnlessTo(server, encodedRegionNames);
      if (!cancelled.isEmpty()) {
        LOG.info("cancelled the queued moves of {} regions: {}", cancelled.size(), cancelled);
      }
    }

    // The decommission mark was set on the old instance's name, not on this one. A local 2.6.4
    // cluster had dropped it (list and znode) by the time the old instance was gone; on kind it was
    // seen to linger. Clearing it by name is harmless either way (the master deletes the znode if
    // present and removes the name from its list), so clear the old name and any other listed
    // instance at this host:port.
    Set<ServerName> oldNames = new LinkedHashSet<>();
    if (!server.equals(target.id())) {
      oldNames.add(name(server));
    }
    for (ServerId m : snap.decommissioned()) {
      if (m.sameEndpoint(server) && !m.equals(target.id())) {
        oldNames.add(name(m));
      }
    }
    List<ServerId> cleared = new ArrayList<>();
    for (ServerName m : oldNames) {
      call(
          "clear decommission mark of " + m,
          () -> {
            admin.recommissionRegionServer(m, List.of());
            return null;
          });
      cleared.add(id(m));
    }

    Map<String, ServerId> where = snap.locations();
    List<String> unknown = new ArrayList<>();
    List<String> onServer = new ArrayList<>();
    List<String> elsewhere = new ArrayList<>();
    for (String region : new LinkedHashSet<>(encodedRegionNames)) {
      if (!where.containsKey(region)) {
        unknown.add(region);
      } else if (target.id().equals(where.get(region))) {
        onServer.add(region);
      } else {
        elsewhere.add(region);
      }
    }
    // A region already moving is not sent again (the master refuses to move a region in
    // transition, and would fail the whole call): it counts as sent.
    Set<String> moving = inTransition();
    List<String> batch =
        elsewhere.stream().filter(r -> !r.equals(META_ENCODED) && !moving.contains(r)).toList();
    // The target's own mark (if any) goes first: a marked server takes no region.
    call(
        "recommission " + targetName,
        () -> {
          admin.recommissionRegionServer(targetName, List.of());
          return null;
        });
    send(target.id(), batch, true, !target.regions().isEmpty());
    if (snap.decommissioned().contains(target.id())) {
      cleared.add(target.id());
    }
    List<String> sent = new ArrayList<>(elsewhere);
    sent.remove(META_ENCODED);
    if (sent.isEmpty() && elsewhere.contains(META_ENCODED) && !moving.contains(META_ENCODED)) {
      LOG.info("moving hbase:meta alone to {}", target.id());
      move(META_ENCODED, target.id());
    }
    if (elsewhere.contains(META_ENCODED)) {
      sent.add(META_ENCODED);
    }
    return new RecommissionResult(target.id(), onServer, sent, unknown, cleared);
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
   * balancer's lock, which HMaster.balance holds for its whole run; with the CacheAwareLoadBalancer
   * (what the planner configures for PersistentFile) that run sleeps {@code
   * hbase.master.balancer.move.throttlingMillis} (60 s) after each move without cache affinity, up
   * to {@code hbase.balancer.max.balancing} (the balancer period, 5 min). Seen on kind: after a
   * roll switched the balancer back on, the next roll's "balancer off" timed out for ~4.5 min, each
   * retry parking one more master RPC handler on that lock until the master stopped answering the
   * operator's other calls. A balance already running finishes its plan list; no new one starts.
   */
  @Override
  public boolean balancer(boolean on) throws HBaseClusterException {
    return call("balancer " + (on ? "on" : "off"), () -> admin.balancerSwitch(on, false));
  }

  /** {@link ServerExpiry}: checked on the master and at the endpoint, then Hbck's procedure. */
  @Override
  public ExpireResult expire(ServerId server) throws HBaseClusterException {
    ExpireResult r = ServerExpiry.expire(connection, reachableSnapshot(), server, PROBE_TIMEOUT);
    LOG.info("{}", r);
    return r;
  }

  /** How long the check before an expiry waits for the instance's endpoint to answer. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  @Override
  public List<ServerId> decommissioned() throws HBaseClusterException {
    return call("list decommissioned", admin::listDecommissionedRegionServers).stream()
        .map(AdminHBaseCluster::id)
        .toList();
  }

  /**
   * HBase's own stop of one RegionServer ({@code Admin.stopRegionServer}, an RPC to the server
   * itself): the graceful stop SIGTERM starts. Needs ADMIN.
   */
  @Override
  public void stopServer(ServerId server, String why) throws HBaseClusterException {
    call(
        "stop " + server,
        () -> {
          admin.stopRegionServer(server.hostAndPort());
          return null;
        });
  }

  @Override
  public void close() {
    try {
      if (warm != null) {
        warm.close();
        moveConnection.close();
      }
      admin.close();
      connection.close();
    } catch (IOException e) {
      LOG.debug("closing the HBase connection: {}", e.toString());
    }
  }

  /** Encoded names of the regions in transition now, and of those this client is sending. */
  private Set<String> inTransition() throws HBaseClusterException {
    Set<String> out =
        call(
                "regions in transition",
                () -> admin.getClusterMetrics(EnumSet.of(Option.REGIONS_IN_TRANSITION)))
            .getRegionStatesInTransition()
            .stream()
            .map(rs -> rs.getRegion().getEncodedName())
            .collect(java.util.stream.Collectors.toSet());
    if (warm != null) {
      out.addAll(warm.regions());
    }
    return out;
  }

  private ClusterSnapshot reachableSnapshot() throws HBaseClusterException {
    ClusterSnapshot snap = snapshot();
    if (snap.accessDenied()) {
      throw new HBaseClusterException.AccessDenied(
          "the cluster's state refused by HBase's ACLs: " + snap.error(), null);
    }
    if (!snap.masterReachable()) {
      throw new HBaseClusterException("HBase's state could not be read: " + snap.error());
    }
    return snap;
  }

  private interface AdminCall<T> {
    T run() throws IOException;
  }

  private static <T> T call(String what, AdminCall<T> c) throws HBaseClusterException {
    try {
      return c.run();
    } catch (IOException | RuntimeException e) {
      if (accessDenied(e)) {
        throw new HBaseClusterException.AccessDenied(what + " refused by HBase's ACLs: " + e, e);
      }
      throw new HBaseClusterException(what + " failed: " + e, e);
    }
  }

  private static final String ACCESS_DENIED =
      org.apache.hadoop.hbase.security.AccessDeniedException.class.getName();

  /**
   * Whether HBase refused the call for want of a permission ({@code AccessDeniedException}, which
   * reaches the client as the cause or, after retries, in the message).
   */
  static boolean accessDenied(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof org.apache.hadoop.hbase.security.AccessDeniedException
          || String.valueOf(t.getMessage()).contains(ACCESS_DENIED)) {
        return true;
      }
    }
    return false;
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
