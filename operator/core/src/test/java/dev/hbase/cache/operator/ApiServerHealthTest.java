package dev.hbase.cache.operator;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ApiServerHealthTest {
  Instant now = Instant.parse("2026-11-23T10:00:00Z");
  final Clock clock =
      new Clock() {
        @Override
        public ZoneOffset getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return now;
        }
      };

  @Test
  void unhealthyOnlyOnceTheApiServerHasBeenUnreachableLongerThanTheGrace() {
    AtomicBoolean reachable = new AtomicBoolean(true);
    ApiServerHealth h =
        new ApiServerHealth(
            () -> {
              if (!reachable.get()) {
                throw new IOException("connection refused");
              }
            },
            clock,
            Duration.ofSeconds(60));
    h.check();
    assertThat(h.problem()).isNull();

    reachable.set(false);
    now = now.plusSeconds(30);
    h.check();
    assertThat(h.problem()).as("30 s: an API server restart, say").isNull();
    now = now.plusSeconds(31);
    h.check();
    assertThat(h.problem()).contains("2026-11-23T10:00:00Z").contains("connection refused");

    reachable.set(true);
    h.check();
    assertThat(h.problem()).isNull();
  }
}
