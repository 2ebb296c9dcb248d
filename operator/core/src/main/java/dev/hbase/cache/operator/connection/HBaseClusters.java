package dev.hbase.cache.operator.connection;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.LongSupplier;

/**
 * One admin connection per namespace, HBase cluster (ZooKeeper quorum, port and znode parent) and
 * identity (the Kerberos principal and keytab of spec.hbase.kerberos, or none), opened on first
 * use: two policies with different principals never share a connection. Per namespace: the client
 * settings come from a ConfigMap of the policy's namespace, and a policy in one namespace never
 * shapes the connection another namespace's policy uses.
 *
 * <p>Bounded by what policies name. Each connection records the policies that use it: one whose
 * settings change moves to another connection, and one deleted leaves ({@link #forget}); a
 * connection no policy uses any more is closed at once. A connection unused for {@link Limits#idle}
 * is closed, and so is one broken (its connect failed, a call outlived its deadline). At most
 * {@link Limits#perNamespace} connections per namespace and {@link Limits#total} in all: beyond
 * them the least recently used goes (of the namespace first), and is opened again at its next use.
 * Closing interrupts the connection's thread and closes its HBase connection (and the warm-move
 * pool of {@code AdminHBaseCluster}) off the caller's thread.
 *
 * <p>No network I/O under a lock: the map is only looked at and changed under it; each connection
 * connects on its own thread ({@link BoundedCluster}), and a caller waits for its own connection
 * only, at most {@link Limits#connect}; every call then has {@link Limits#call}. A ZooKeeper that
 * never answers holds its own policy's reconciles for those deadlines, and nobody else's.
 */
public final class HBaseClusters implements AutoCloseable {

  /**
   * The bounds of the cache.
   *
   * @param connect how long a caller waits for a connection being opened (then its calls fail at
   *     once until the connect ends)
   * @param call how long a caller waits for one call (a snapshot, a drain, a switch), over the
   *     HBase client's own timeouts
   * @param idle a connection unused for this long is closed
   * @param perNamespace the most connections of one namespace
   * @param total the most connections in all
   */
  public record Limits(
      Duration connect,
      Duration call,
      Duration idle,
      int perNamespace,
      int total,
      int callsPerNamespace,
      int callsInAll) {

    /** With 2 calls at once per namespace and 6 in all ({@link CallSlots}). */
    public Limits(Duration connect, Duration call, Duration idle, int perNamespace, int total) {
      this(connect, call, idle, perNamespace, total, 2, 6);
    }

    /**
     * 15 s to connect (a healthy ZooKeeper answers in milliseconds; one that accepts connections
     * and never answers held {@code AdminHBaseCluster.connect} 27 s, {@code SilentZooKeeperTest}),
     * 90 s per call (a snapshot asks ZooKeeper, the master and each RegionServer, each within the
     * client's 10 s ZooKeeper read, 10 s RPC and 20 s operation timeouts), idle after 10 min, 8 per
     * namespace (one per cluster a namespace's policies name: RegionServer groups of one cluster
     * share theirs), 128 in all; 2 calls at once per namespace and 6 in all ({@link CallSlots}).
     */
    public static Limits defaults() {
      return new Limits(
          Duration.ofSeconds(15), Duration.ofSeconds(90), Duration.ofMinutes(10), 8, 128);
    }
  }

  private final HBaseConnector connector;
  private final Limits limits;
  private final LongSupplier nanoTime;
  private final Object lock = new Object();
  private final CallSlots slots;

  /** The connections by key; under {@link #lock}, never any I/O. */
  private final Map<String, Entry> open = new HashMap<>();

  /** The key of the connection each policy (by UID) used last; under {@link #lock}. */
  private final Map<String, String> usedBy = new HashMap<>();

  /** Where connections are closed: off the caller's thread (a close may wait for a server). */
  private final ExecutorService closer =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "hbase-connection-close");
            t.setDaemon(true);
            return t;
          });

  private static final class Entry {
    final String key;
    final String namespace;
    final BoundedCluster cluster;
    final java.util.Set<String> users = new java.util.HashSet<>();
    long lastUsed;

    Entry(String key, String namespace, BoundedCluster cluster, long now) {
      this.key = key;
      this.namespace = namespace;
      this.cluster = cluster;
      this.lastUsed = now;
    }
  }

  public HBaseClusters(HBaseConnector connector) {
    this(connector, Limits.defaults(), System::nanoTime);
  }

  public HBaseClusters(HBaseConnector connector, Limits limits, LongSupplier nanoTime) {
    this.connector = connector;
    this.limits = limits;
    this.nanoTime = nanoTime;
    this.slots = new CallSlots(limits.callsPerNamespace(), limits.callsInAll());
  }

  /** The cluster the policy's RegionServers belong to, without Kerberos. */
  public HBaseCluster of(BlockCachePolicy policy, ConfigMap base) {
    return of(policy, base, null);
  }

  /**
   * The cluster the policy's RegionServers belong to, as {@code login} (null: none). Waits for the
   * connection only while it is being opened, {@link Limits#connect} at most; its calls are bounded
   * by {@link Limits#call}.
   */
  public HBaseCluster of(BlockCachePolicy policy, ConfigMap base, KerberosLogin login) {
    Map<String, String> settings = clientSettings(policy.getSpec(), base);
    // the policy's namespace, not the base's: a missing base (null) would put every tenant's
    // policies in one bucket of connections and call slots
    String ns =
        policy.getMetadata() == null || policy.getMetadata().getNamespace() == null
            ? ""
            : policy.getMetadata().getNamespace();
    // every client setting is in the key: a changed principal or protection in the base
    // hbase-site gets a new connection, not the one made with the old
    String key = ns + "|" + settings + "|" + (login == null ? "" : login.id());
    String user = user(policy);
    List<BoundedCluster> closing = new ArrayList<>();
    Entry e;
    synchronized (lock) {
      long now = nanoTime.getAsLong();
      e = open.get(key);
      if (e != null && e.cluster.broken()) {
        drop(e, closing);
        e = null;
      }
      if (e == null) {
        String what = "namespace " + ns + ", quorum " + settings.get(QUORUM);
        e =
            new Entry(
                key,
                ns,
                new BoundedCluster(
                    what,
                    () -> connector.connect(settings, login),
                    limits.connect(),
                    limits.call(),
                    closer,
                    nanoTime,
                    slots,
                    ns),
                now);
        open.put(key, e);
      }
      e.lastUsed = now;
      String before = usedBy.put(user, key);
      e.users.add(user);
      if (before != null && !before.equals(key)) {
        Entry old = open.get(before);
        if (old != null) {
          old.users.remove(user);
          if (old.users.isEmpty()) {
            drop(old, closing); // the policy's settings changed: nobody uses the old one
          }
        }
      }
      trim(now, e, closing);
    }
    closing.forEach(BoundedCluster::close);
    e.cluster.awaitConnected();
    return e.cluster;
  }

  /**
   * The policy is gone (its cleanup): it no longer uses its connection, which is closed unless
   * another policy uses it.
   */
  public void forget(BlockCachePolicy policy) {
    List<BoundedCluster> closing = new ArrayList<>();
    synchronized (lock) {
      String key = usedBy.remove(user(policy));
      Entry e = key == null ? null : open.get(key);
      if (e != null) {
        e.users.remove(user(policy));
        if (e.users.isEmpty()) {
          drop(e, closing);
        }
      }
    }
    closing.forEach(BoundedCluster::close);
  }

  /** How many connections are open (or opening) now. */
  public int size() {
    synchronized (lock) {
      return open.size();
    }
  }

  /**
   * Closes and forgets the connections made as {@code login} (a login dropped: its Secret rotated,
   * gone or no longer allowed); the next use of its cluster connects again as whatever identity it
   * has then. A call under way on one fails, and its step is taken again.
   */
  public void closeAll(KerberosLogin login) {
    String suffix = "|" + login.id(); // unique to this login: no other login's connection matches
    List<BoundedCluster> closing = new ArrayList<>();
    // out of the map first, so that no caller is handed one being closed; closed after, each on
    // its own. (A reconcile that read the login just before it was replaced may still connect as
    // it: that connection is cached under this login's id, which no later lookup uses.)
    synchronized (lock) {
      for (Entry e : List.copyOf(open.values())) {
        if (e.key.endsWith(suffix)) {
          drop(e, closing);
        }
      }
    }
    closing.forEach(BoundedCluster::close);
  }

  /** Out of the map (under the lock); closed by the caller after it. */
  private void drop(Entry e, List<BoundedCluster> closing) {
    open.remove(e.key);
    e.users.forEach(u -> usedBy.remove(u, e.key));
    closing.add(e.cluster);
  }

  /**
   * Idle and broken connections out, then the least recently used over the caps (not {@code keep}).
   */
  private void trim(long now, Entry keep, List<BoundedCluster> closing) {
    for (Entry e : List.copyOf(open.values())) {
      if (e != keep && (e.cluster.broken() || now - e.lastUsed > limits.idle().toNanos())) {
        drop(e, closing);
      }
    }
    List<Entry> inNamespace =
        open.values().stream()
            .filter(e -> e != keep && e.namespace.equals(keep.namespace))
            .sorted(Comparator.comparingLong(e -> e.lastUsed))
            .toList();
    for (int i = 0; i < inNamespace.size() + 1 - limits.perNamespace(); i++) {
      drop(inNamespace.get(i), closing);
    }
    List<Entry> all =
        open.values().stream()
            .filter(e -> e != keep)
            .sorted(Comparator.comparingLong(e -> e.lastUsed))
            .toList();
    for (int i = 0; i < all.size() + 1 - limits.total(); i++) {
      drop(all.get(i), closing);
    }
  }

  private static String user(BlockCachePolicy policy) {
    var m = policy.getMetadata();
    return m.getUid() != null ? m.getUid() : m.getNamespace() + "/" + m.getName();
  }

  static final String QUORUM = "hbase.zookeeper.quorum";
  static final String CLIENT_PORT = "hbase.zookeeper.property.clientPort";
  static final String ZNODE_PARENT = "zookeeper.znode.parent";

  /**
   * The keys of the base hbase-site the operator's own client takes: where the cluster is and how
   * to authenticate to it. An allow-list: the base ConfigMap is the policy author's, and keys such
   * as hbase.client.registry.impl or hbase.rpc.client.impl name classes the client would
   * instantiate in the operator's JVM.
   */
  static final java.util.Set<String> CLIENT_KEYS =
      java.util.Set.of(
          "hbase.zookeeper.quorum",
          "hbase.zookeeper.property.clientPort",
          "zookeeper.znode.parent",
          "hbase.security.authentication",
          "hadoop.security.authentication",
          "hbase.rpc.protection",
          "hbase.master.kerberos.principal",
          "hbase.regionserver.kerberos.principal");

  /**
   * The client's hbase-site: the base hbase-site's {@link #CLIENT_KEYS} (ZooKeeper port, znode
   * parent, security settings), with spec.hbase's quorum and znode parent over them, and the HBase
   * defaults (localhost, /hbase) where neither says. The operator's own fail-fast timeouts are
   * applied over these by the connection.
   */
  static Map<String, String> clientSettings(BlockCachePolicySpec spec, ConfigMap base) {
    Map<String, String> site =
        base == null || base.getData() == null
            ? Map.of()
            : SiteXml.parse(base.getData().get(Desired.SITE_FILE));
    Map<String, String> settings = new TreeMap<>();
    site.forEach(
        (k, v) -> {
          if (CLIENT_KEYS.contains(k)) {
            settings.put(k, v);
          }
        });
    var hbase = spec.getHbase();
    if (hbase != null && hbase.getZookeeperQuorum() != null) {
      settings.put(QUORUM, hbase.getZookeeperQuorum());
    }
    if (hbase != null && hbase.getZookeeperZnodeParent() != null) {
      settings.put(ZNODE_PARENT, hbase.getZookeeperZnodeParent());
    }
    settings.putIfAbsent(QUORUM, "localhost");
    settings.putIfAbsent(ZNODE_PARENT, "/hbase");
    return settings;
  }

  @Override
  public void close() {
    List<BoundedCluster> closing = new ArrayList<>();
    synchronized (lock) {
      List.copyOf(open.values()).forEach(e -> drop(e, closing));
    }
    closing.forEach(BoundedCluster::close); // the closer's threads end once idle
  }
}
