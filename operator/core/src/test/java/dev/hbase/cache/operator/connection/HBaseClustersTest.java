package dev.hbase.cache.operator.connection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import org.junit.jupiter.api.Test;

class HBaseClustersTest {
  static ConfigMap base(String properties) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("hbase-site")
        .endMetadata()
        .addToData("hbase-site.xml", "<configuration>" + properties + "</configuration>")
        .build();
  }

  static String property(String name, String value) {
    return "<property><name>" + name + "</name><value>" + value + "</value></property>";
  }

  /** A policy of the namespace, with its UID. */
  static dev.hbase.cache.api.v1alpha1.BlockCachePolicy policy(String ns, String name) {
    var p = new dev.hbase.cache.api.v1alpha1.BlockCachePolicy();
    p.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withNamespace(ns)
            .withName(name)
            .withUid(ns + "-" + name + "-uid")
            .build());
    p.setSpec(new BlockCachePolicySpec());
    return p;
  }

  @Test
  void theClientReadsTheBaseSiteLikeAPodWould() {
    var settings =
        HBaseClusters.clientSettings(
            new BlockCachePolicySpec(),
            base(
                property("hbase.zookeeper.quorum", "zk-0.zk,zk-1.zk")
                    + property("hbase.zookeeper.property.clientPort", "2281")
                    + property("zookeeper.znode.parent", "/hbase-prod")
                    + property("hbase.security.authentication", "simple")));
    assertThat(settings)
        .containsEntry("hbase.zookeeper.quorum", "zk-0.zk,zk-1.zk")
        .containsEntry("hbase.zookeeper.property.clientPort", "2281")
        .containsEntry("zookeeper.znode.parent", "/hbase-prod")
        .containsEntry("hbase.security.authentication", "simple");
  }

  /** Keys naming classes the client would load in the operator's JVM stay out (issue 25). */
  @Test
  void onlyWhereTheClusterIsAndHowToAuthenticateReachTheOperatorsClient() {
    var settings =
        HBaseClusters.clientSettings(
            new BlockCachePolicySpec(),
            base(
                property("hbase.zookeeper.quorum", "zk-0.zk")
                    + property("hbase.client.registry.impl", "evil.Registry")
                    + property("hbase.client.connection.impl", "evil.Connection")
                    + property("hbase.rpc.client.impl", "evil.RpcClient")
                    + property("hbase.rpc.protection", "privacy")));
    assertThat(settings)
        .containsEntry("hbase.zookeeper.quorum", "zk-0.zk")
        .containsEntry("hbase.rpc.protection", "privacy")
        .doesNotContainKeys(
            "hbase.client.registry.impl", "hbase.client.connection.impl", "hbase.rpc.client.impl");
  }

  /** Two namespaces naming one cluster get a connection each. */
  @Test
  void oneConnectionPerNamespaceAndCluster() {
    java.util.List<java.util.Map<String, String>> connected = new java.util.ArrayList<>();
    var clusters =
        new HBaseClusters(
            (settings, login) -> {
              connected.add(settings);
              return (dev.hbase.cache.operator.hbase.HBaseCluster)
                  java.lang.reflect.Proxy.newProxyInstance(
                      getClass().getClassLoader(),
                      new Class<?>[] {dev.hbase.cache.operator.hbase.HBaseCluster.class},
                      (proxy, method, args) -> null);
            });
    ConfigMap a = base(property("hbase.zookeeper.quorum", "zk.shared"));
    a.getMetadata().setNamespace("team-a");
    ConfigMap b = base(property("hbase.zookeeper.quorum", "zk.shared"));
    b.getMetadata().setNamespace("team-b");
    clusters.of(policy("team-a", "p"), a);
    clusters.of(policy("team-a", "p"), a);
    assertThat(connected).hasSize(1);
    clusters.of(policy("team-b", "p"), b);
    assertThat(connected).hasSize(2);
  }

  @Test
  void specHBaseWinsAndDefaultsFillTheRest() {
    var spec = new BlockCachePolicySpec();
    spec.setHbase(new HBaseSpec().setZookeeperQuorum("zk.other:2181"));
    var settings =
        HBaseClusters.clientSettings(spec, base(property("hbase.zookeeper.quorum", "zk-0.zk")));
    assertThat(settings)
        .containsEntry("hbase.zookeeper.quorum", "zk.other:2181")
        .containsEntry("zookeeper.znode.parent", "/hbase");
    assertThat(HBaseClusters.clientSettings(new BlockCachePolicySpec(), null))
        .containsEntry("hbase.zookeeper.quorum", "localhost");
  }
}
