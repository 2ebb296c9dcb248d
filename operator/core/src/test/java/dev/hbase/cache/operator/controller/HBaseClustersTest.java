package dev.hbase.cache.operator.controller;

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
