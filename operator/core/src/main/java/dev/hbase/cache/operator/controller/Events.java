package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes events on a policy. {@link #warn} is for conditions that every reconcile sees again (a
 * refused plan, a missing StatefulSet): a reason+message already sent is not sent again. {@link
 * #record} is for occurrences (a pod restarted), sent each time: the same one again (same reason
 * and message) counts up on its existing object instead of making a new one.
 */
public final class Events {
  private static final Logger log = LoggerFactory.getLogger(Events.class);
  private final Clock clock;
  private final Map<String, String> last = new ConcurrentHashMap<>();

  public Events(Clock clock) {
    this.clock = clock;
  }

  public void warn(
      KubernetesClient client, BlockCachePolicy policy, String reason, String message) {
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
      String reason,
      String message) {
    String key = policy.getMetadata().getUid() + "/" + reason + "/" + subject;
    if (message.equals(last.put(key, message))) {
      return;
    }
    record(client, policy, warning, reason, message);
  }

  public void record(
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
    log.info(
        "{} {}/{}: {}",
        reason,
        policy.getMetadata().getNamespace(),
        policy.getMetadata().getName(),
        message);
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
