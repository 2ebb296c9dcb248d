package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.roll.RollModel;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.processing.MDCUtils;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Events on a real API server: the same event again counts up on one object; a reconcile does not
 * wait for them.
 */
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
    events.flush(Duration.ofSeconds(10));
    return client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> e.getInvolvedObject().getName().equals(policy))
        .toList();
  }

  @Test
  void theSameEventAgainCountsUpOnItsObject() {
    BlockCachePolicy p = policy("counted");
    events.record(client, p, true, Reason.ActionFailed, "could not delete rs-1: timeout");
    now.set(Instant.parse("2026-11-23T10:05:00Z"));
    events.record(client, p, true, Reason.ActionFailed, "could not delete rs-1: timeout");
    events.record(client, p, true, Reason.ActionFailed, "could not delete rs-1: timeout");

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
    events.record(
        client, p, new RollModel.Event(false, RollModel.EventReason.PodRestarted, "rs-0 back"));
    events.record(
        client, p, new RollModel.Event(false, RollModel.EventReason.PodRestarted, "rs-1 back"));
    events.record(
        client, p, new RollModel.Event(false, RollModel.EventReason.RollFinished, "rs-1 back"));
    events.record(
        client,
        policy("other"),
        new RollModel.Event(false, RollModel.EventReason.PodRestarted, "rs-0 back"));

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
    events.warn(client, p, Reason.PlanRefused, "memory limit 2Gi is too small");
    events.warn(client, p, Reason.PlanRefused, "memory limit 2Gi is too small");

    assertThat(eventsOf("warned"))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
  }

  /**
   * An API server that holds the first request without an answer until {@link #answer} (an
   * overloaded one), then answers every request with 201; it keeps every request line and body.
   */
  static final class HeldApiServer implements AutoCloseable {
    final CountDownLatch arrived = new CountDownLatch(1);
    final CountDownLatch answer = new CountDownLatch(1);
    final List<String> requests = new CopyOnWriteArrayList<>();
    final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl("http://127.0.0.1:" + server.getLocalPort())
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();

    HeldApiServer() throws IOException {
      Thread t = new Thread(this::serve, "held-api-server");
      t.setDaemon(true);
      t.start();
    }

    private void serve() {
      try {
        while (!server.isClosed()) {
          try (Socket s = server.accept()) {
            var in = new BufferedReader(new InputStreamReader(s.getInputStream()));
            String line = in.readLine();
            int length = 0;
            for (String h = in.readLine(); h != null && !h.isEmpty(); h = in.readLine()) {
              if (h.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(h.substring(15).trim());
              }
            }
            char[] body = new char[length];
            for (int read = 0; read < length; ) {
              read += in.read(body, read, length - read);
            }
            requests.add(line + " " + new String(body));
            arrived.countDown();
            answer.await();
            byte[] reply = new String(body).getBytes(StandardCharsets.UTF_8);
            s.getOutputStream()
                .write(
                    ("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                            + "Connection: close\r\nContent-Length: "
                            + reply.length
                            + "\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8));
            s.getOutputStream().write(reply);
          }
        }
      } catch (Exception closed) {
        // the test is over
      }
    }

    /** The message of each request, in the order they came. */
    List<String> messages() {
      return requests.stream()
          .map(r -> r.replaceAll(".*\"message\":\"([^\"]*)\".*", "$1"))
          .toList();
    }

    @Override
    public void close() throws IOException {
      client.close();
      server.close();
    }
  }

  /**
   * An API server that takes the request and does not answer (overloaded): recording returns at
   * once, the event is sent by the background thread, and once the answer comes the next events
   * follow in order.
   */
  @Test
  void recordingDoesNotWaitForTheApiServer() throws Exception {
    try (HeldApiServer api = new HeldApiServer()) {
      BlockCachePolicy p = policy("slow");
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () -> {
            events.record(
                api.client,
                p,
                new RollModel.Event(false, RollModel.EventReason.RollStarted, "first"));
            events.record(
                api.client,
                p,
                new RollModel.Event(false, RollModel.EventReason.PodRestarted, "second"));
          },
          "record() waited for the API server's answer");
      assertThat(api.arrived.await(10, TimeUnit.SECONDS))
          .as("the event was sent meanwhile")
          .isTrue();
      assertThat(api.requests).singleElement().asString().startsWith("POST ");
      assertThat(api.messages()).containsExactly("first");

      api.answer.countDown();
      events.flush(Duration.ofSeconds(10));
      assertThat(api.messages()).containsExactly("first", "second");
    }
  }

  /**
   * While the API server does not answer, {@value Events#QUEUE} events wait behind the one being
   * sent; the next one is dropped (docs/operations/operating.md: "with 1,000 waiting ... further
   * ones are dropped"), and recording never blocks.
   */
  @Test
  void pastTheQueueEventsAreDropped() throws Exception {
    try (HeldApiServer api = new HeldApiServer()) {
      BlockCachePolicy p = policy("flood");
      events.record(
          api.client, p, new RollModel.Event(false, RollModel.EventReason.PodRestarted, "e0"));
      assertThat(api.arrived.await(10, TimeUnit.SECONDS)).isTrue(); // e0 in flight, held
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () -> {
            for (int i = 1; i <= Events.QUEUE + 1; i++) {
              events.record(
                  api.client,
                  p,
                  new RollModel.Event(false, RollModel.EventReason.PodRestarted, "e" + i));
            }
          },
          "record() blocked on a full queue");

      api.answer.countDown();
      events.flush(Duration.ofSeconds(60));
      assertThat(api.messages())
          .as("e0 sent, e1..e%d waited, e%d dropped", Events.QUEUE, Events.QUEUE + 1)
          .hasSize(Events.QUEUE + 1)
          .startsWith("e0", "e1")
          .endsWith("e" + Events.QUEUE)
          .doesNotContain("e" + (Events.QUEUE + 1));
    }
  }

  /**
   * A send that fails is logged by the sender thread, with the policy of the reconcile that
   * recorded the event in its MDC (as JOSDK sets it), as the reconcile's own lines have it.
   */
  @Test
  void aFailedSendIsLoggedInTheLoggingContextOfTheReconcile() throws Exception {
    int refused;
    try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      refused = closed.getLocalPort();
    }
    ch.qos.logback.classic.Logger logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(Events.class);
    var lines =
        new ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent>();
    lines.start();
    logger.addAppender(lines);
    BlockCachePolicy p = policy("unsent");
    try (KubernetesClient down =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl("http://127.0.0.1:" + refused)
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build()) {
      MDCUtils.addResourceInfo(p);
      try {
        events.record(
            down, p, new RollModel.Event(true, RollModel.EventReason.RollBlocked, "lost"));
      } finally {
        MDCUtils.removeResourceInfo();
      }
      events.flush(Duration.ofSeconds(30));
    } finally {
      logger.detachAppender(lines);
    }
    assertThat(lines.list)
        .filteredOn(e -> e.getFormattedMessage().startsWith("could not record event RollBlocked"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getThreadName()).isEqualTo("event-sender");
              assertThat(e.getMDCPropertyMap())
                  .containsEntry("resource.namespace", "default")
                  .containsEntry("resource.name", "unsent");
            });
  }
}
