package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.logging.LogContext;
import dev.hbase.cache.operator.roll.RollModel;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes events on a policy. {@link #warn} is for conditions that every reconcile sees again (a
 * refused plan, a missing StatefulSet): a reason+message already sent is not sent again. {@link
 * #record} is for occurrences (a pod restarted), sent each time: the same one again (same reason
 * and message) counts up on its existing object instead of making a new one.
 *
 * <p>Events are sent by one background thread, in the order they were recorded, as client-go's
 * recorder does: a reconcile does not wait for them (at 200 RegionServers rolling, the event
 * creates were 12% of a rolling reconcile's wall time, docs/bench-operator.md). Events are
 * informational: the roll's state is in the status, never in an event. When the API server is so
 * slow that {@value #QUEUE} events wait, further ones are dropped with a log line (client-go drops
 * them too), and the operator's log has every event anyway.
 */
public final class Events implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Events.class);
  static final int QUEUE = 1000;
  private final Clock clock;
  private final Map<String, String> last = new ConcurrentHashMap<>();
  private final ThreadPoolExecutor sender =
      new ThreadPoolExecutor(
          1,
          1,
          0,
          TimeUnit.MILLISECONDS,
          new LinkedBlockingQueue<>(QUEUE),
          r -> {
            Thread t = new Thread(r, "event-sender");
            t.setDaemon(true);
            return t;
          },
          (r, executor) ->
              log.warn(
                  executor.isShutdown()
                      ? "an event recorded after shutdown is not sent"
                      : QUEUE + " events wait to be sent: one dropped"));

  public Events(Clock clock) {
    this.clock = clock;
  }

  /**
   * @param reason an enum constant, sent as its name: a {@link Reason}, an {@link Observation.Why}
   */
  public void warn(
      KubernetesClient client, BlockCachePolicy policy, Enum<?> reason, String message) {
    once(client, policy, "", true, reason, message);
  }

  /**
   * Like {@link #warn}, per subject (a pod): a reason+message already sent for that subject is not
   * sent again.
   */
  public void once(
      KubernetesClient client,
      BlockCachePolicy policy,
      String subject,
      boolean warning,
      Enum<?> reason,
      String message) {
    String key = policy.getMetadata().getUid() + "/" + reason.name() + "/" + subject;
    if (message.equals(last.put(key, message))) {
      return;
    }
    record(client, policy, warning, reason, message);
  }

  public void record(
      KubernetesClient client,
      BlockCachePolicy policy,
      boolean warning,
      Enum<?> reason,
      String message) {
    post(client, policy, warning, reason.name(), message);
  }

  /** An event of a roll, as the roller names it. */
  public void record(KubernetesClient client, BlockCachePolicy policy, RollModel.Event e) {
    post(client, policy, e.warning(), e.reason(), e.message());
  }

  private void post(
      KubernetesClient client,
      BlockCachePolicy policy,
      boolean warning,
      String reason,
      String message) {
    String now = clock.instant().toString();
    String text = message.length() > 1000 ? message.substring(0, 1000) : message;
    String ns = policy.getMetadata().getNamespace();
    // One object per policy, type, reason and message, as client-go's event recorder aggregates:
    // the same event again raises its count and lastTimestamp (kubectl describe: "x3 over 5m").
    String name = name(policy, warning, reason, text);
    log.info(
        "{} {}/{}: {}",
        reason,
        policy.getMetadata().getNamespace(),
        policy.getMetadata().getName(),
        message);
    // the send's lines name the policy, as the reconcile's do
    sender.execute(
        LogContext.carry(() -> send(client, policy, warning, reason, text, ns, name, now)));
  }

  /** Waits until the events recorded so far have been sent (or dropped), at most {@code max}. */
  public void flush(Duration max) {
    long until = System.nanoTime() + max.toNanos();
    // not a task behind the others: with the queue full it would be dropped itself
    while (sender.getCompletedTaskCount() < sender.getTaskCount()) {
      if (System.nanoTime() > until) {
        log.warn("events not all sent within {}", max);
        return;
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Sends what was recorded (up to 5 s), then stops. */
  @Override
  public void close() {
    sender.shutdown();
    try {
      if (!sender.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("{} events not sent at shutdown", sender.shutdownNow().size());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void send(
      KubernetesClient client,
      BlockCachePolicy policy,
      boolean warning,
      String reason,
      String text,
      String ns,
      String name,
      String now) {
    try {
      var events = client.v1().events().inNamespace(ns);
      try {
        events
            .resource(
                new EventBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .withNamespace(ns)
                    .endMetadata()
                    .withInvolvedObject(
                        new ObjectReferenceBuilder()
                            .withApiVersion(policy.getApiVersion())
                            .withKind(policy.getKind())
                            .withName(policy.getMetadata().getName())
                            .withNamespace(ns)
                            .withUid(policy.getMetadata().getUid())
                            .build())
                    .withType(warning ? "Warning" : "Normal")
                    .withReason(reason)
                    .withMessage(text)
                    .withFirstTimestamp(now)
                    .withLastTimestamp(now)
                    .withCount(1)
                    .withNewSource("hbase-cache-operator", null)
                    .build())
            .create();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        events
            .withName(name)
            .edit(
                ev ->
                    new EventBuilder(ev)
                        .withCount(ev.getCount() == null ? 2 : ev.getCount() + 1)
                        .withLastTimestamp(now)
                        .build());
      }
    } catch (RuntimeException e) {
      log.warn(
          "could not record event {} on {}: {}",
          reason,
          policy.getMetadata().getName(),
          e.toString());
    }
  }

  /**
   * The policy's name and a hash of what makes the event the same event: its uid, type, reason,
   * message.
   */
  static String name(BlockCachePolicy policy, boolean warning, String reason, String message) {
    try {
      byte[] h =
          MessageDigest.getInstance("SHA-256")
              .digest(
                  (policy.getMetadata().getUid() + "/" + warning + "/" + reason + "/" + message)
                      .getBytes(StandardCharsets.UTF_8));
      String name = policy.getMetadata().getName();
      // a name is at most 253 characters
      return (name.length() > 236 ? name.substring(0, 236) : name)
          + "."
          + HexFormat.of().formatHex(h, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
