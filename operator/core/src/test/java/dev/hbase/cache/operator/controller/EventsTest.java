package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Events on a real API server: the same event again counts up on one object. */
@EnableKubeAPIServer
class EventsTest {
  static KubernetesClient client;

  final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-23T10:00:00Z"));
  final Events events =
      new Events(
          new Clock() {
            @Override
            public Instant instant() {
              return now.get();
            }

            @Override
            public java.time.ZoneId getZone() {
              return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
              return this;
            }
          });

  static BlockCachePolicy policy(String name) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withNamespace("default")
            .withUid("uid-" + name)
            .build());
    return p;
  }

  List<Event> eventsOf(String policy) {
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> e.getInvolvedObject().getName().equals(policy))
        .toList();
  }

  @Test
  void theSameEventAgainCountsUpOnItsObject() {
    BlockCachePolicy p = policy("counted");
    events.record(client, p, true, "ActionFailed", "could not delete rs-1: timeout");
    now.set(Instant.parse("2026-11-23T10:05:00Z"));
    events.record(client, p, true, "ActionFailed", "could not delete rs-1: timeout");
    events.record(client, p, true, "ActionFailed", "could not delete rs-1: timeout");

    assertThat(eventsOf("counted")).hasSize(1);
    Event e = eventsOf("counted").get(0);
    assertThat(e.getCount()).isEqualTo(3);
    assertThat(e.getFirstTimestamp()).isEqualTo("2026-11-23T10:00:00Z");
    assertThat(e.getLastTimestamp()).isEqualTo("2026-11-23T10:05:00Z");
    assertThat(e.getType()).isEqualTo("Warning");
  }

  @Test
  void anotherMessageReasonOrPolicyIsAnotherEvent() {
    BlockCachePolicy p = policy("distinct");
    events.record(client, p, false, "PodRestarted", "rs-0 back");
    events.record(client, p, false, "PodRestarted", "rs-1 back");
    events.record(client, p, false, "RollFinished", "rs-1 back");
    events.record(client, policy("other"), false, "PodRestarted", "rs-0 back");

    assertThat(eventsOf("distinct"))
        .extracting(e -> e.getReason() + ": " + e.getMessage() + " x" + e.getCount())
        .containsExactlyInAnyOrder(
            "PodRestarted: rs-0 back x1",
            "PodRestarted: rs-1 back x1",
            "RollFinished: rs-1 back x1");
    assertThat(eventsOf("other")).hasSize(1);
  }

  @Test
  void aWarningAlreadySentIsNotSentAgainByThisOperator() {
    BlockCachePolicy p = policy("warned");
    events.warn(client, p, "PlanRefused", "memory limit 2Gi is too small");
    events.warn(client, p, "PlanRefused", "memory limit 2Gi is too small");

    assertThat(eventsOf("warned"))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
  }
}
