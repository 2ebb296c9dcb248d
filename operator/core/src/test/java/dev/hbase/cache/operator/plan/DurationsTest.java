package dev.hbase.cache.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
  @Test
  void eventsSayDurationsTheWayPoliciesWriteThem() {
    assertThat(Durations.format(Duration.ofMinutes(10))).isEqualTo("10m");
    assertThat(Durations.format(Duration.ofSeconds(30))).isEqualTo("30s");
    assertThat(Durations.format(Duration.ofSeconds(5400))).isEqualTo("1h30m");
    assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
    for (String s : new String[] {"10m", "30s", "1h30m", "2h", "1m0.5s", "90s"}) {
      assertThat(Durations.parse(Durations.format(Durations.parse(s))))
          .isEqualTo(Durations.parse(s));
    }
  }
}
