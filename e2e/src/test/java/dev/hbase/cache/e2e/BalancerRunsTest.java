package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The counts step 6 compares: the workload's last line and the Balanced condition's message. */
class BalancerRunsTest {
  @Test
  void theWorkloadsLastCountsAndTheConditionsCountsReadAlike() {
    String log =
        "balancer on: true\n"
            + "regions per server before: {hbase-regionserver-0=4, hbase-regionserver-1=2, hbase-regionserver-2=2}\n"
            + "balancer run 1: ran true, moves calculated 1, executed 1; regions per server after:"
            + " {hbase-regionserver-0=3, hbase-regionserver-1=3, hbase-regionserver-2=2}\n"
            + "balanced after 3 runs\n";
    Map<String, String> last = BalancerRuns.lastCounts(log);
    assertThat(last)
        .containsExactly(
            Map.entry("hbase-regionserver-0", "3"),
            Map.entry("hbase-regionserver-1", "3"),
            Map.entry("hbase-regionserver-2", "2"));
    assertThat(
            BalancerRuns.counts(
                "regions per server: hbase-regionserver-0 3, hbase-regionserver-1 3,"
                    + " hbase-regionserver-2 2 (mean 2.7), each within one of it"))
        .isEqualTo(last);
    assertThat(
            BalancerRuns.counts(
                "regions per server: hbase-regionserver-0 4, hbase-regionserver-1 2,"
                    + " hbase-regionserver-2 2 (mean 2.7), each within one of it"))
        .isNotEqualTo(last);
  }
}
