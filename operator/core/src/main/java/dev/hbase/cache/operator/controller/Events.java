package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes events on a policy. {@link #warn} is for conditions that every reconcile sees again (a
 * refused plan, a missing StatefulSet): a reason+message already sent is not sent again. {@link
 * #record} is for occurrences (a pod restarted), sent each time.
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
    try {
      client
          .v1()
          .events()
          .inNamespace(policy.getMetadata().getNamespace())
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(
                      policy.getMetadata().getName()
                          + "."
                          + UUID.randomUUID().toString().substring(0, 8))
                  .withNamespace(policy.getMetadata().getNamespace())
                  .endMetadata()
                  .withInvolvedObject(
                      new ObjectReferenceBuilder()
                          .withApiVersion(policy.getApiVersion())
                          .withKind(policy.getKind())
                          .withName(policy.getMetadata().getName())
                          .withNamespace(policy.getMetadata().getNamespace())
                          .withUid(policy.getMetadata().getUid())
                          .build())
                  .withType(warning ? "Warning" : "Normal")
                  .withReason(reason)
                  .withMessage(message.length() > 1000 ? message.substring(0, 1000) : message)
                  .withFirstTimestamp(now)
                  .withLastTimestamp(now)
                  .withCount(1)
                  .withNewSource("hbase-cache-operator", null)
                  .build())
          .create();
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
}
