package dev.hbase.cache.operator.connection;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One admin connection per namespace, HBase cluster (ZooKeeper quorum, port and znode parent) and
 * identity (the Kerberos principal and keytab of spec.hbase.kerberos, or none), opened on first
 * use: two policies with different principals never share a connection. Per namespace: the client
 * settings come from a ConfigMap of the policy's namespace, and a policy in one namespace never
 * shapes the connection another namespace's policy uses.
 */
public final class HBaseClusters implements AutoCloseable {
  private final HBaseConnector connector;
  private final Map<String, HBaseCluster> open = new ConcurrentHashMap<>();

  public HBaseClusters(HBaseConnector connector) {
    this.connector = connector;
  }

  /** The cluster the policy's RegionServers belong to, without Kerberos. */
  public HBaseCluster of(BlockCachePolicySpec spec, ConfigMap base) {
    return of(spec, base, null);
  }

  /** The cluster the policy's RegionServers belong to, as {@code login} (null: none). */
  public HBaseCluster of(BlockCachePolicySpec spec, ConfigMap base, KerberosLogin login) {
    Map<String, String> settings = clientSettings(spec, base);
    String ns = base == null || base.getMetadata() == null ? "" : base.getMetadata().getNamespace();
    // every client setting is in the key: a changed principal or protection in the base
    // hbase-site gets a new connection, not the one made with the old
    String key = ns + "|" + settings + "|" + (login == null ? "" : login.id());
    return open.computeIfAbsent(key, k -> connector.connect(settings, login));
  }

  /**
   * Closes and forgets the connections made as {@code login} (a login dropped: its Secret rotated,
   * gone or no longer allowed); the next use of its cluster connects again as whatever identity it
   * has then. A call under way on one fails, and its step is taken again.
   */
  public void closeAll(KerberosLogin login) {
    String suffix = "|" + login.id(); // unique to this login: no other login's connection matches
    java.util.List<HBaseCluster> gone = new java.util.ArrayList<>();
    // out of the map first, so that no caller is handed one being closed; closed after, each on
    // its own. (A reconcile that read the login just before it was replaced may still connect as
    // it: that connection is cached under this login's id, which no later lookup uses.)
    open.entrySet()
        .removeIf(
            e -> {
              if (!e.getKey().endsWith(suffix)) {
                return false;
              }
              gone.add(e.getValue());
              return true;
            });
    for (HBaseCluster c : gone) {
      try {
        c.close();
      } catch (RuntimeException e) {
        // a connection that fails to close is dropped all the same
      }
    }
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
    open.values().forEach(HBaseCluster::close);
    open.clear();
  }
}
