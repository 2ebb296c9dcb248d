package dev.hbase.cache.hbaseit;

import static org.awaitility.Awaitility.await;

import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.hbase.ServerId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/**
 * A real HBase cluster on loopback (2.6.4, or the release whose classpath {@code hbase.lib.dir}
 * names: {@code make test-hbase HBASE_VERSION=2.5.13-hadoop3}, see {@link #SERVER_VERSION}): one
 * ZooKeeper, one HMaster and RegionServers, each a process started through
 * images/hbase/entrypoint.sh with the Maven-built classpath, its own conf dir and a
 * local-filesystem root dir under the test's directory. RegionServer {@code i} always uses the same
 * ports, so a restarted one is "the same pod" (same host and port, new start code).
 */
final class LocalHBase implements AutoCloseable {

  static final Path ENTRYPOINT = path("hbase.entrypoint", "../../images/hbase/entrypoint.sh");
  static final Path LIB_DIR = path("hbase.lib.dir", "../../images/hbase/target/lib");
  static final Path IT_DIR = path("hbase.it.dir", "target/hbase-it");
  static final String HOST = "127.0.0.1";

  /**
   * The HBase release of the servers these tests start: the version of the hbase-server jar in
   * {@link #LIB_DIR} (e.g. {@code 2.6.4-hadoop3}), null when there is none. The operator's own
   * client stays the one it is built with (2.6.4) whatever this is.
   */
  static final String SERVER_VERSION = serverVersion(LIB_DIR);

  /** The line of {@link #SERVER_VERSION}, as a policy's {@code spec.hbase.version} names it. */
  static String serverLine() {
    String[] p = SERVER_VERSION == null ? new String[0] : SERVER_VERSION.split("\\.");
    return p.length < 2 ? null : p[0] + "." + p[1];
  }

  /** Whether the servers run the 2.5 line (no CacheAwareLoadBalancer, no core RSGroups). */
  static boolean line25() {
    return "2.5".equals(serverLine());
  }

  private static String serverVersion(Path lib) {
    try (var jars = Files.list(lib)) {
      return jars.map(j -> j.getFileName().toString())
          .filter(n -> n.matches("hbase-server-[0-9].*\\.jar"))
          .map(n -> n.substring("hbase-server-".length(), n.length() - ".jar".length()))
          .findFirst()
          .orElse(null);
    } catch (IOException e) {
      return null;
    }
  }

  /** A RegionServer's settings: container environment and hbase-site keys (e.g. a Plan's). */
  record RegionServerSettings(Map<String, String> env, Map<String, String> site) {}

  /**
   * How a secured cluster is secured: hbase-site keys of every daemon, the client's keys, JVM
   * options of every daemon, and the identity the test's own connections and admins act as.
   */
  record Security(
      Map<String, String> serverSite,
      Map<String, String> clientSite,
      String jvmOpts,
      KerberosLogin login) {
    static final Security NONE = new Security(Map.of(), Map.of(), "", null);

    /** Kerberos RPC, ZooKeeper SASL and HBase ACLs with the KDC's keytabs, acting as {@code as}. */
    static Security kerberos(SecureKdc kdc, KerberosLogin as) {
      return new Security(kdc.serverSite(), kdc.clientSite(), kdc.jvmOpts(), as);
    }
  }

  final Path dir;
  private Path rootDir;
  private final int zkPort;
  private final int masterPort;
  private final int masterInfoPort;
  private final int[][] rsPorts;
  private HBaseProcess zk;
  private HBaseProcess master;
  private final Map<Integer, HBaseProcess> regionServers = new TreeMap<>();

  /**
   * RegionServer i listens on and registers as 127.0.0.(11+i) instead of 127.0.0.1 (every address
   * of 127/8 is the loopback interface), so that servers differ by host as pods do (the roller
   * tells a pod's RegionServer by its IP). Info ports stay on 127.0.0.1.
   */
  private boolean hostPerRegionServer;

  /** RegionServer i listens on 127.0.0.(firstAddress+i) with {@link #hostPerRegionServer}. */
  private int firstAddress = 11;

  /**
   * The name RegionServer i registers under instead of its address, resolved to that address by
   * every daemon of this cluster through {@link #hostsFile} (null: it registers as its address).
   */
  private java.util.function.IntFunction<String> regionServerNames;

  /**
   * A hosts file every daemon of this cluster reads instead of the system resolver ({@code
   * -Djdk.net.hosts.file}): the RegionServers' names as a pod's DNS name, without DNS. Null: the
   * system resolver. The test JVM does not read it: its client talks to the master only.
   */
  private Path hostsFile;

  private final List<Connection> connections = new ArrayList<>();
  private final List<AdminHBaseCluster> admins = new ArrayList<>();
  private final Security security;

  private LocalHBase(Path dir, int maxRegionServers, Security security) {
    this.dir = dir;
    this.security = security;
    this.zkPort = freePort();
    this.masterPort = freePort();
    this.masterInfoPort = freePort();
    this.rsPorts = new int[maxRegionServers][];
    for (int i = 0; i < maxRegionServers; i++) {
      rsPorts[i] = new int[] {freePort(), freePort()};
    }
  }

  /** Starts ZooKeeper and the HMaster; RegionServers are started by the test. */
  static LocalHBase start(String name, int maxRegionServers) throws IOException {
    return start(name, maxRegionServers, Map.of());
  }

  /** Same, with extra hbase-site keys for the HMaster (balancer class and timings, say). */
  static LocalHBase start(String name, int maxRegionServers, Map<String, String> masterSite)
      throws IOException {
    return start(name, maxRegionServers, masterSite, null);
  }

  /**
   * Same, with the HBase root dir (HFiles, WALs) at {@code rootDir} instead of under the test's
   * directory: on a {@link SlowStorage} mount, say.
   */
  static LocalHBase start(
      String name, int maxRegionServers, Map<String, String> masterSite, Path rootDir)
      throws IOException {
    return start(name, maxRegionServers, masterSite, rootDir, Security.NONE);
  }

  /**
   * A cluster whose RegionServer i registers under {@code names.apply(i)} (a pod's DNS name, say
   * {@code rs-0.hbase-regionserver.team-a.svc.cluster.local}) at its own address 127.0.0.({@code
   * firstAddress}+i): the daemons resolve those names through a hosts file of their own. Two such
   * clusters at once stand for two namespaces' HBase.
   */
  static LocalHBase startNamed(
      String name,
      int maxRegionServers,
      int firstAddress,
      java.util.function.IntFunction<String> names)
      throws IOException {
    return start(name, maxRegionServers, Map.of(), null, Security.NONE, firstAddress, names);
  }

  /** A secured cluster: see {@link Security}. */
  static LocalHBase startSecured(String name, int maxRegionServers, Security security)
      throws IOException {
    return start(name, maxRegionServers, Map.of(), null, security);
  }

  /** Same, with extra hbase-site keys for the HMaster. */
  static LocalHBase startSecured(
      String name, int maxRegionServers, Map<String, String> masterSite, Security security)
      throws IOException {
    return start(name, maxRegionServers, masterSite, null, security);
  }

  private static LocalHBase start(
      String name,
      int maxRegionServers,
      Map<String, String> masterSite,
      Path rootDir,
      Security security)
      throws IOException {
    return start(name, maxRegionServers, masterSite, rootDir, security, 0, null);
  }

  private static LocalHBase start(
      String name,
      int maxRegionServers,
      Map<String, String> masterSite,
      Path rootDir,
      Security security,
      int firstAddress,
      java.util.function.IntFunction<String> names)
      throws IOException {
    if (SERVER_VERSION == null) {
      throw new IllegalStateException(
          "no HBase classpath in "
              + LIB_DIR
              + ": run `mvn -f images/hbase/pom.xml package` (make test-hbase does)");
    }
    Path dir = IT_DIR.resolve(name + "-" + System.currentTimeMillis()).toAbsolutePath();
    Files.createDirectories(dir.resolve("logs"));
    LocalHBase hbase = new LocalHBase(dir, maxRegionServers, security);
    hbase.rootDir = rootDir != null ? rootDir : dir.resolve("root");
    if (names != null) {
      hbase.hostPerRegionServer = true;
      hbase.firstAddress = firstAddress;
      hbase.regionServerNames = names;
      hbase.hostsFile = dir.resolve("hosts");
      StringBuilder hosts = new StringBuilder("127.0.0.1 localhost " + machineName() + "\n");
      for (int i = 0; i < maxRegionServers; i++) {
        hosts.append(hbase.regionServerAddress(i)).append(' ').append(names.apply(i)).append('\n');
      }
      Files.writeString(hbase.hostsFile, hosts.toString());
      jvmHosts(hosts.toString());
    }
    try {
      hbase.zk =
          hbase.daemon(
              "zookeeper", "zookeeper", Map.of(), Map.of("HBASE_HEAPSIZE", "128m"), List.of());
      awaitPort(hbase.zkPort, Duration.ofSeconds(60), hbase.zk);
      hbase.master =
          hbase.daemon(
              "master",
              "master",
              masterSite,
              Map.of("HBASE_HEAPSIZE", "320m", "HBASE_MASTER_OPTS", "-XX:+UseSerialGC"),
              List.of());
      awaitPort(hbase.masterPort, Duration.ofSeconds(90), hbase.master);
      return hbase;
    } catch (RuntimeException | IOException e) {
      hbase.close();
      throw e;
    }
  }

  /** See {@link #hostPerRegionServer}; call before starting RegionServers. */
  LocalHBase withHostPerRegionServer() {
    hostPerRegionServer = true;
    return this;
  }

  /** The host RegionServer i registers as: its name ({@link #startNamed}) or its address. */
  String regionServerHost(int i) {
    return regionServerNames != null ? regionServerNames.apply(i) : regionServerAddress(i);
  }

  /** The address RegionServer i listens on. */
  String regionServerAddress(int i) {
    return hostPerRegionServer ? "127.0.0." + (firstAddress + i) : HOST;
  }

  /**
   * This machine's host name (daemons look it up): in the hosts file beside localhost. From the
   * kernel where it can: with a hosts file of its own ({@link #jvmHosts}) this JVM may not resolve
   * it.
   */
  private static String machineName() {
    try {
      String kernel = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
      if (!kernel.isEmpty()) {
        return kernel;
      }
    } catch (IOException | RuntimeException notLinux) {
      // the resolver's name below
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return System.getenv().getOrDefault("HOSTNAME", "localhost");
    }
  }

  /**
   * Where this JVM resolves names from its own hosts file ({@code -Djdk.net.hosts.file}: the
   * hbase-it pom's own-cluster execution), a named cluster's entries go there too, so that its
   * HBase client reaches RegionServers registered under a pod's DNS name. The JDK reads the file at
   * each lookup.
   */
  private static synchronized void jvmHosts(String entries) throws IOException {
    String file = System.getProperty("jdk.net.hosts.file");
    if (file == null) {
      return;
    }
    Path p = Path.of(file);
    Files.createDirectories(p.toAbsolutePath().getParent());
    // the first cluster of this JVM starts the file afresh (no entries of an earlier run)
    Files.writeString(
        p,
        entries,
        java.nio.file.StandardOpenOption.CREATE,
        jvmHostsStarted
            ? java.nio.file.StandardOpenOption.APPEND
            : java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
    jvmHostsStarted = true;
  }

  private static boolean jvmHostsStarted;

  /** Client settings that reach this cluster (what the operator gets from hbase-site). */
  Map<String, String> clientSettings() {
    Map<String, String> s = new LinkedHashMap<>(security.clientSite());
    s.put("hbase.zookeeper.quorum", HOST);
    s.put("hbase.zookeeper.property.clientPort", Integer.toString(zkPort));
    return s;
  }

  AdminHBaseCluster admin() throws HBaseClusterException {
    return admin(AdminHBaseCluster.Options.defaults());
  }

  AdminHBaseCluster admin(AdminHBaseCluster.Options options) throws HBaseClusterException {
    AdminHBaseCluster admin =
        AdminHBaseCluster.connect(clientSettings(), options, security.login());
    admins.add(admin);
    return admin;
  }

  /**
   * Loads a table through RegionServer 0 started with Lru settings, then stops it (SIGTERM): the
   * data is in HFiles and the test starts RegionServer 0 again with the settings it examines.
   */
  TestTable loadWithLru(AdminHBaseCluster admin, String table, int rows, int regions)
      throws Exception {
    startRegionServer(
        0, Plans.settings(Plans.plan(dev.hbase.cache.api.v1alpha1.CacheMode.Lru, dir)));
    awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
    TestTable t = TestTable.create(connection(), table, rows, regions);
    int exit = stopRegionServer(0);
    if (exit != 143) {
      throw new IllegalStateException(
          "RegionServer 0 did not stop cleanly after loading: exit " + exit);
    }
    return t;
  }

  /** A plain client connection for the test's own reads and writes (closed with the cluster). */
  Connection connection() throws IOException {
    return connection(Map.of());
  }

  /** Same, with extra client keys ({@code hbase.client.pause}, say). */
  Connection connection(Map<String, String> extra) throws IOException {
    org.apache.hadoop.conf.Configuration conf =
        dev.hbase.cache.operator.hbase.PerUserSaslSelector.select(
            org.apache.hadoop.hbase.HBaseConfiguration.create());
    clientSettings().forEach(conf::set);
    conf.setInt("hbase.client.retries.number", 10);
    extra.forEach(conf::set);
    Connection c =
        security.login() == null
            ? ConnectionFactory.createConnection(conf)
            : ConnectionFactory.createConnection(conf, security.login().user());
    connections.add(c);
    return c;
  }

  /** Children of a znode (e.g. /hbase/draining, where decommission marks live). */
  List<String> zkChildren(String path) throws Exception {
    var zk =
        new org.apache.hadoop.hbase.shaded.org.apache.zookeeper.ZooKeeper(
            HOST + ":" + zkPort, 10_000, event -> {});
    try {
      return zk.exists(path, false) == null ? List.of() : zk.getChildren(path, false);
    } finally {
      zk.close();
    }
  }

  int regionServerPort(int i) {
    return rsPorts[i][0];
  }

  int regionServerInfoPort(int i) {
    return rsPorts[i][1];
  }

  /** Starts RegionServer i (again) with these settings; returns once its RPC port is open. */
  HBaseProcess startRegionServer(int i, RegionServerSettings settings) throws IOException {
    if (regionServers.containsKey(i) && regionServers.get(i).alive()) {
      throw new IllegalStateException("regionserver " + i + " is running");
    }
    Map<String, String> site = new LinkedHashMap<>();
    site.put("hbase.regionserver.port", Integer.toString(rsPorts[i][0]));
    site.put("hbase.regionserver.info.port", Integer.toString(rsPorts[i][1]));
    site.put("hbase.unsafe.regionserver.hostname", regionServerHost(i));
    site.put("hbase.regionserver.ipc.address", regionServerAddress(i));
    site.putAll(settings.site());
    HBaseProcess rs = daemon("rs" + i, "regionserver", site, settings.env(), List.of());
    regionServers.put(i, rs);
    awaitPort(regionServerAddress(i), rsPorts[i][0], Duration.ofSeconds(90), rs);
    return rs;
  }

  /** Waits until RegionServer i is live at the master and has sent a load report. */
  ServerId awaitRegionServerReported(AdminHBaseCluster admin, int i, Duration timeout) {
    ServerId[] found = new ServerId[1];
    ClusterSnapshot[] last = new ClusterSnapshot[1];
    try {
      await("regionserver " + i + " registered and reported")
          .atMost(timeout)
          .pollInterval(Duration.ofMillis(250))
          .until(
              () -> {
                ClusterSnapshot s = admin.snapshot();
                last[0] = s;
                var state = s.liveAt(regionServerHost(i), rsPorts[i][0]);
                state
                    .filter(ClusterSnapshot.ServerState::reported)
                    .ifPresent(x -> found[0] = x.id());
                return found[0] != null;
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new IllegalStateException(
          e.getMessage() + "; the last snapshot: " + last[0] + ", see " + dir.resolve("logs"), e);
    }
    return found[0];
  }

  /**
   * Waits until the master is reachable, nothing is in transition and the only live RegionServer
   * serves at least {@code minRegions} regions (hbase:meta included).
   */
  static void awaitOneServerServing(AdminHBaseCluster admin, int minRegions, Duration timeout) {
    await("all regions online")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              ClusterSnapshot s = admin.snapshot();
              return s.masterReachable()
                  && s.regionsInTransition() == 0
                  && s.live().size() == 1
                  && s.live().get(0).regionCount() >= minRegions;
            });
  }

  /** Graceful stop (SIGTERM) of RegionServer i; returns its exit code (143 for a clean SIGTERM). */
  int stopRegionServer(int i) {
    HBaseProcess rs = regionServers.remove(i);
    return rs == null ? 0 : rs.stop(120);
  }

  HBaseProcess regionServer(int i) {
    return regionServers.get(i);
  }

  HBaseProcess master() {
    return master;
  }

  @Override
  public void close() {
    admins.forEach(AdminHBaseCluster::close);
    for (Connection c : connections) {
      try {
        c.close();
      } catch (IOException | RuntimeException ignored) {
        // the cluster goes away anyway
      }
    }
    regionServers.values().forEach(HBaseProcess::signalStop);
    regionServers.values().forEach(p -> p.stop(60));
    regionServers.clear();
    if (master != null) {
      master.stop(30);
    }
    if (zk != null) {
      zk.stop(15);
    }
    deleteDataKeepLogs();
    if (!rootDir.startsWith(dir)) {
      delete(rootDir);
    }
  }

  /** Removes root dir, caches and ZooKeeper data (hundreds of MB); keeps logs and JMX captures. */
  private void deleteDataKeepLogs() {
    try (var entries = Files.list(dir)) {
      for (Path p : entries.toList()) {
        String n = p.getFileName().toString();
        if (Files.isDirectory(p) && !n.equals("logs") && !n.startsWith("conf-")) {
          delete(p);
        }
      }
    } catch (IOException e) {
      // best effort: target/ is cleaned by mvn clean
    }
  }

  private static void delete(Path tree) {
    try (var walk = Files.walk(tree)) {
      walk.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // best effort: target/ is cleaned by mvn clean
    }
  }

  private HBaseProcess daemon(
      String name,
      String role,
      Map<String, String> roleSite,
      Map<String, String> env,
      List<String> args)
      throws IOException {
    Path conf = dir.resolve("conf-" + name);
    Files.createDirectories(conf);
    Map<String, String> site = new LinkedHashMap<>(commonSite());
    site.putAll(security.serverSite());
    site.putAll(roleSite);
    Files.writeString(conf.resolve("hbase-site.xml"), siteXml(site));
    if (site.containsKey("hadoop.security.authentication")) {
      // Hadoop's UserGroupInformation reads its mode from core-site.xml, not hbase-site.xml
      Files.writeString(
          conf.resolve("core-site.xml"),
          siteXml(
              Map.of(
                  "hadoop.security.authentication", site.get("hadoop.security.authentication"))));
    }
    // metrics2 refresh every second instead of 10 s, so tests read fresh counters sooner
    Files.writeString(conf.resolve("hadoop-metrics2-hbase.properties"), "*.period=1\n");
    Map<String, String> daemonEnv = new LinkedHashMap<>(env);
    if (!security.jvmOpts().isEmpty()) {
      daemonEnv.merge("HBASE_OPTS", security.jvmOpts(), (a, b) -> a + " " + b);
    }
    if (hostsFile != null) {
      daemonEnv.merge("HBASE_OPTS", "-Djdk.net.hosts.file=" + hostsFile, (a, b) -> a + " " + b);
    }
    return HBaseProcess.start(
        name, role, conf, daemonEnv, dir.resolve("logs").resolve(name + ".log"), args);
  }

  private Map<String, String> commonSite() {
    Map<String, String> s = new LinkedHashMap<>();
    s.put("hbase.cluster.distributed", "true");
    s.put("hbase.rootdir", rootDir.toUri().toString());
    s.put("hbase.tmp.dir", dir.resolve("tmp").toString());
    s.put("hbase.unsafe.stream.capability.enforce", "false");
    s.put("hbase.wal.provider", "filesystem");
    s.put("hbase.zookeeper.quorum", HOST);
    s.put("hbase.zookeeper.property.clientPort", Integer.toString(zkPort));
    s.put("hbase.zookeeper.property.clientPortAddress", HOST);
    s.put("hbase.zookeeper.property.dataDir", dir.resolve("zk").toString());
    s.put("hbase.zookeeper.property.admin.enableServer", "false");
    s.put("hbase.zookeeper.property.maxClientCnxns", "0");
    s.put("hbase.master.hostname", HOST);
    s.put("hbase.master.ipc.address", HOST);
    s.put("hbase.master.port", Integer.toString(masterPort));
    s.put("hbase.master.info.port", Integer.toString(masterInfoPort));
    s.put("hbase.master.info.bindAddress", HOST);
    s.put("hbase.unsafe.regionserver.hostname", HOST);
    s.put("hbase.regionserver.ipc.address", HOST);
    s.put("hbase.regionserver.info.bindAddress", HOST);
    s.put("hbase.regionserver.handler.count", "10");
    s.put("hbase.master.wait.on.regionservers.mintostart", "1");
    // the counters /jmx shows are refreshed every second instead of every 5 s
    s.put("hbase.regionserver.metrics.period", "1000");
    return s;
  }

  static String siteXml(Map<String, String> site) {
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\"?>\n<configuration>\n");
    site.forEach(
        (k, v) ->
            b.append("  <property><name>")
                .append(xml(k))
                .append("</name><value>")
                .append(xml(v))
                .append("</value></property>\n"));
    return b.append("</configuration>\n").toString();
  }

  private static String xml(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  static void awaitPort(int port, Duration timeout, HBaseProcess process) {
    awaitPort(HOST, port, timeout, process);
  }

  static void awaitPort(String host, int port, Duration timeout, HBaseProcess process) {
    await(process.name + " listening on " + host + ":" + port)
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(250))
        .failFast(process.name + " exited, see " + process.log, () -> !process.alive())
        .until(() -> portOpen(host, port));
  }

  static boolean portOpen(int port) {
    return portOpen(HOST, port);
  }

  static boolean portOpen(String host, int port) {
    try (Socket s = new Socket(InetAddress.getByName(host), port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Surefire's fork number (1, 2, ...): make test-hbase runs two test classes at once. */
  private static final int FORK = Integer.getInteger("hbase.it.fork", 1);

  private static final AtomicInteger NEXT_PORT = new AtomicInteger();

  /**
   * A port free now, from this fork's own range of 2,000 below the kernel's ephemeral ports
   * (32768+). A port picked here is bound by a daemon only later, and is free again while a
   * RegionServer restarts on it: one the kernel handed out (port 0) could be handed to the other
   * fork's cluster in between.
   */
  private static int freePort() {
    int base = 20000 + Math.floorMod(FORK - 1, 6) * 2000;
    for (int tries = 0; tries < 2000; tries++) {
      int port = base + Math.floorMod(NEXT_PORT.getAndIncrement(), 2000);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName(HOST))) {
        return port;
      } catch (IOException inUse) {
        // another process's: the next one
      }
    }
    throw new IllegalStateException("no free port in " + base + "-" + (base + 1999));
  }

  private static Path path(String property, String fallback) {
    return Path.of(System.getProperty(property, fallback)).toAbsolutePath().normalize();
  }
}
