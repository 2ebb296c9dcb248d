package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.Map;

/**
 * A second record of the one thing a roll must give back that HBase cannot tell afterwards: that
 * the balancer was on before the roll switched it off ({@code status.rollout.balancerWasOn}). The
 * status is the roll's memory, but it can be lost while the target lives on: a backup restored
 * without status, {@code kubectl edit --subresource=status}, the policy deleted and created again.
 * Without this the next admission reads the balancer off (the roll's own doing) and the roll ends
 * with it off for good (issue 50 point 5).
 *
 * <p>The record is the annotation {@value #ANNOTATION}{@code ="true"} on the target StatefulSet,
 * which those losses do not touch: written before the roll switches the balancer off, removed once
 * the roll no longer owes it. A status without {@code balancerWasOn} is completed from it ({@link
 * #recovered}). What it can make the operator do is switch the policy's own cluster's balancer on
 * (as a hand-set status can): only the cluster the policy's pods serve ({@code OwnCluster}), and
 * whoever can annotate the StatefulSet can already restart its pods.
 */
final class BalancerRecord {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(BalancerRecord.class);

  static final String ANNOTATION = "cache.hbase.dev/balancer-was-on";

  private BalancerRecord() {}

  /** Whether the target carries the record. */
  static boolean recorded(StatefulSet target) {
    Map<String, String> a = target == null ? null : target.getMetadata().getAnnotations();
    return a != null && "true".equals(a.get(ANNOTATION));
  }

  /**
   * The roll's state, completed from the record when it lost {@code balancerWasOn}: the same object
   * when nothing is missing, else a copy with {@code balancerWasOn=true}.
   */
  static RolloutStatus recovered(RolloutStatus previous, StatefulSet target) {
    if (!recorded(target) || (previous != null && previous.getBalancerWasOn() != null)) {
      return previous;
    }
    RolloutStatus r =
        previous == null
            ? new RolloutStatus()
            : io.fabric8.kubernetes.client.utils.Serialization.clone(previous);
    return r.setBalancerWasOn(true);
  }

  /** Whether the record must be written before the step's actions: the roll owes the balancer. */
  static boolean needed(RolloutStatus state, StatefulSet target) {
    return Boolean.TRUE.equals(state.getBalancerWasOn()) && !recorded(target);
  }

  /** Whether the record may go: the roll no longer owes the balancer. */
  static boolean stale(RolloutStatus state, StatefulSet target) {
    return (state == null || !Boolean.TRUE.equals(state.getBalancerWasOn())) && recorded(target);
  }

  /**
   * The record kept with a roll step: {@code before} the step's actions, written when the roll owes
   * the balancer (false when that fails: nothing is sent, the step is taken again); after them,
   * removed once it no longer does (a failure is logged and tried again at the next step).
   */
  static boolean sync(
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet target,
      RolloutStatus state,
      boolean before) {
    boolean write = before ? needed(state, target) : stale(state, target);
    if (!write) {
      return true;
    }
    try {
      write(client, target, before);
      return true;
    } catch (KubernetesClientException e) {
      log.warn(
          "policy {}/{}: could not {} {} on StatefulSet {}: {}",
          policy.getMetadata().getNamespace(),
          policy.getMetadata().getName(),
          before ? "write" : "remove",
          ANNOTATION,
          target.getMetadata().getName(),
          e.getMessage());
      return !before;
    }
  }

  /** Writes ({@code on}) or removes the record: a merge patch of the one annotation. */
  static void write(KubernetesClient client, StatefulSet target, boolean on) {
    String value = on ? "\"true\"" : "null";
    client
        .apps()
        .statefulSets()
        .inNamespace(target.getMetadata().getNamespace())
        .withName(target.getMetadata().getName())
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{\"" + ANNOTATION + "\":" + value + "}}}");
  }
}
