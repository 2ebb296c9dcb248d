package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.Map;
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

  /** The cluster the policy's RegionServers belong to: spec.hbase, else the base hbase-site. */
  HBaseCluster of(BlockCachePolicySpec spec, ConfigMap base) {
    Map<String, String> site =
        base == null || base.getData() == null
            ? Map.of()
            : SiteXml.parse(base.getData().get(Desired.SITE_FILE));
    String quorum = quorum(spec, site);
    String parent = znodeParent(spec, site);
    return open.computeIfAbsent(quorum + parent, k -> connector.connect(quorum, parent));
  }

  static String quorum(BlockCachePolicySpec spec, Map<String, String> site) {
    if (spec.getHbase() != null && spec.getHbase().getZookeeperQuorum() != null) {
      return spec.getHbase().getZookeeperQuorum();
    }
    String q = site == null ? null : site.get("hbase.zookeeper.quorum");
    return q != null ? q : "localhost";
  }

  static String znodeParent(BlockCachePolicySpec spec, Map<String, String> site) {
    if (spec.getHbase() != null && spec.getHbase().getZookeeperZnodeParent() != null) {
      return spec.getHbase().getZookeeperZnodeParent();
    }
    String z = site == null ? null : site.get("zookeeper.znode.parent");
    return z != null ? z : "/hbase";
  }

  @Override
  public void close() {
    open.values().forEach(HBaseCluster::close);
    open.clear();
  }
}
