package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One admin connection per HBase cluster (ZooKeeper quorum + znode parent), opened on first use.
 */
final class HBaseClusters implements AutoCloseable {
  private final HBaseConnector connector;
  private final Map<String, HBaseCluster> open = new ConcurrentHashMap<>();

  HBaseClusters(HBaseConnector connector) {
    this.connector = connector;
  }

  /** The cluster the policy's RegionServers belong to (one connection per quorum, port, parent). */
  HBaseCluster of(BlockCachePolicySpec spec, ConfigMap base) {
    Map<String, String> settings = clientSettings(spec, base);
    String key =
        settings.get(QUORUM) + "|" + settings.get(CLIENT_PORT) + "|" + settings.get(ZNODE_PARENT);
    return open.computeIfAbsent(key, k -> connector.connect(settings));
  }

  static final String QUORUM = "hbase.zookeeper.quorum";
  static final String CLIENT_PORT = "hbase.zookeeper.property.clientPort";
  static final String ZNODE_PARENT = "zookeeper.znode.parent";

  /**
   * The client's hbase-site, as an HBase client in a RegionServer pod would read it: every key of
   * the base hbase-site (ZooKeeper port, znode parent, security settings), with spec.hbase's quorum
   * and znode parent over them, and the HBase defaults (localhost, /hbase) where neither says. The
   * operator's own fail-fast timeouts are applied over these by the connection.
   */
  static Map<String, String> clientSettings(BlockCachePolicySpec spec, ConfigMap base) {
    Map<String, String> site =
        base == null || base.getData() == null
            ? Map.of()
            : SiteXml.parse(base.getData().get(Desired.SITE_FILE));
    Map<String, String> settings = new TreeMap<>(site);
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
