package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import dev.hbase.cache.operator.metrics.CacheProbe;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The bench's bridge carries every admin call, answer and error as the in-process call has them.
 */
class HBaseBridgeTest {
  Instant now = Instant.parse("2026-11-25T10:00:00Z");

  @Test
  void callsAnswersAndErrorsCrossTheBridgeUnchanged() throws Exception {
    SimulatedHBase hbase = new SimulatedHBase(() -> now);
    hbase.register("rs-0", "rs-0.rs", "10.0.0.1", List.of("a", "b"));
    SimulatedHBase.Server rs1 = hbase.register("rs-1", "rs-1.rs", "10.0.0.2", List.of("c"));
    now = now.plusSeconds(5); // both reported
    try (HBaseBridge bridge = new HBaseBridge(q -> q.equals("zk") ? hbase : null, hbase.probe())) {
      HBaseCluster remote = BridgedOperator.cluster(bridge.url(), "zk");
      assertThat(remote.snapshot()).isEqualTo(hbase.snapshot());

      ServerId rs0 = hbase.servers.get("rs-0").id;
      remote.drain(rs0, Map.of("a", rs1.id, "b", rs1.id));
      assertThat(hbase.decommissioned).containsExactly(rs0);
      assertThat(remote.decommissioned()).containsExactly(rs0);
      assertThat(remote.balancer(false)).isTrue();
      assertThat(hbase.balancerOn).isFalse();

      // a restarted instance that has not reported: the roller must see NotReady, not a failure
      hbase.unregister("rs-0");
      hbase.register("rs-0", "rs-0.rs", "10.0.0.3", List.of());
      assertThatThrownBy(() -> remote.recommission(rs0, List.of("a", "b")))
          .isInstanceOf(HBaseClusterException.NotReady.class);
      now = now.plus(Duration.ofSeconds(5));
      var back = remote.recommission(rs0, List.of("a", "b"));
      assertThat(back.sent()).containsExactly("a", "b");
      assertThat(back.server()).isEqualTo(hbase.servers.get("rs-0").id);
      assertThat(hbase.servers.get("rs-0").regions).containsExactly("a", "b");

      CacheProbe probe = BridgedOperator.probe(bridge.url());
      assertThat(probe.scrape("10.0.0.2", SimulatedHBase.INFO_PORT))
          .isEqualTo(hbase.probe().scrape("10.0.0.2", SimulatedHBase.INFO_PORT));
      assertThatThrownBy(() -> probe.scrape("10.9.9.9", SimulatedHBase.INFO_PORT))
          .isInstanceOf(IOException.class);
      assertThatThrownBy(() -> BridgedOperator.cluster(bridge.url(), "other").snapshot())
          .hasMessageContaining("no simulated cluster");
    }
  }
}
