package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.roll.Roller;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;

/**
 * A second record of the one thing a roll must give back that HBase cannot tell afterwards: that
 * the balancer was on before the roll switched it off ({@code status.rollout.balancerWasOn}). The
 * status is the roll's memory, but it can be lost while the policy and its target live on: a backup
 * restored without status, {@code kubectl edit --subresource=status}. Without this the next
 * admission reads the balancer off (the roll's own doing) and the roll ends with it off for good
 * (issue 50 point 5).
 *
 * <p>The record is the annotation {@value #ANNOTATION} on the target StatefulSet, its value the UID
 * of the policy whose roll owes the balancer; those losses do not touch it. Written before the roll
 * switches the balancer off, removed once the roll no longer owes it. A status of that policy
 * without {@code balancerWasOn}, and not idle (a roll, or no roll state at all), is completed from
 * it ({@link #recovered}); another policy's record (a second policy on the StatefulSet, refused
 * with Conflict) is never read as its own. A policy deleted and created again has a new UID: its
 * old self gave the balancer back before its finalizer went. Whoever can annotate the StatefulSet
 * can make the operator switch the policy's own cluster's balancer on once ({@code OwnCluster}: no
 * other), as a hand-set status can, and can already restart its pods.
 */
final class BalancerRecord {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(BalancerRecord.class);

  static final String ANNOTATION = "cache.hbase.dev/balancer-was-on";

  /**
   * The second record of the servers the roll holds decommissioned or may mark next: the policy's
   * UID, then their ServerNames ({@link Roller#marked}), space-separated. Written before the step
   * whose state first holds one, rewritten after each step whose state holds another set, removed
   * with the balancer record. A deleted policy whose status lost them still clears their marks
   * ({@link Roller#release(RolloutStatus, java.util.Collection)}; found by the roller's model
   * check, RollerModelCheckTest).
   */
  static final String MARKS = "cache.hbase.dev/servers-marked";

  private BalancerRecord() {}

  /** Whether the target carries the record of this policy. */
  static boolean recorded(StatefulSet target, BlockCachePolicy policy) {
    Map<String, String> a = target == null ? null : target.getMetadata().getAnnotations();
    String value = a == null ? null : a.get(ANNOTATION);
    return value != null && value.equals(uid(policy));
  }

  private static String uid(BlockCachePolicy policy) {
    return policy.getMetadata().getUid();
  }

  /**
   * The roll's state, completed from the record when it lost {@code balancerWasOn}: the same object
   * when nothing is missing (or the rollout is idle: a roll that ended gave the balancer back, and
   * a record whose removal failed must not switch it on at every reconcile), else a copy with
   * {@code balancerWasOn=true}.
   */
  static RolloutStatus recovered(
      RolloutStatus previous, StatefulSet target, BlockCachePolicy policy) {
    if (!recorded(target, policy)
        || (previous != null
            && (previous.getBalancerWasOn() != null
                || previous.getPhase() == RolloutStatus.Phase.Idle))) {
      return previous;
    }
    RolloutStatus r = previous == null ? new RolloutStatus() : Serialization.clone(previous);
    return r.setBalancerWasOn(true);
  }

  /** The servers this policy's record holds marked, or none. */
  static List<String> recordedMarks(StatefulSet target, BlockCachePolicy policy) {
    Map<String, String> a = target == null ? null : target.getMetadata().getAnnotations();
    String value = a == null ? null : a.get(MARKS);
    if (value == null) {
      return List.of();
    }
    List<String> words = List.of(value.trim().split("\\s+"));
    return words.isEmpty() || !words.get(0).equals(uid(policy))
        ? List.of()
        : words.subList(1, words.size());
  }

  /**
   * The marks record kept with a roll step: before the actions, every server the step's state holds
   * is added; after them, a server goes once the state no longer holds it and the step's snapshot
   * of the master ({@code hbase}) shows it unmarked (a status lost mid-drain keeps it, and so does
   * a master that did not answer). Best effort, as {@link #sync}.
   */
  static void syncMarks(
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet target,
      RolloutStatus state,
      ClusterSnapshot hbase,
      boolean before) {
    List<String> recorded = recordedMarks(target, policy);
    List<String> want = Roller.marksToRecord(recorded, state, before ? null : hbase);
    if (new java.util.HashSet<>(want).equals(new java.util.HashSet<>(recorded))) {
      return;
    }
    try {
      writeMarks(
          client, target, want.isEmpty() ? null : uid(policy) + " " + String.join(" ", want));
    } catch (KubernetesClientException e) {
      log.warn(
          "policy {}/{}: could not write {} on StatefulSet {}: {}",
          policy.getMetadata().getNamespace(),
          policy.getMetadata().getName(),
          MARKS,
          target.getMetadata().getName(),
          e.getMessage());
    }
  }

  /** Whether the record must be written before the step's actions: the roll owes the balancer. */
  static boolean needed(RolloutStatus state, StatefulSet target, BlockCachePolicy policy) {
    return Boolean.TRUE.equals(state.getBalancerWasOn()) && !recorded(target, policy);
  }

  /** Whether the record may go: the roll no longer owes the balancer. */
  static boolean stale(RolloutStatus state, StatefulSet target, BlockCachePolicy policy) {
    return (state == null || !Boolean.TRUE.equals(state.getBalancerWasOn()))
        && recorded(target, policy);
  }

  /**
   * The record kept with a roll step: {@code before} the step's actions, written when the roll owes
   * the balancer; after them, removed once it no longer does. A failure (a webhook, a missing
   * permission) is a Warning event and the roll goes on with the status as its only record; the
   * write is tried again at the next step.
   */
  static void sync(
      Events events,
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet target,
      RolloutStatus state,
      boolean before) {
    boolean write = before ? needed(state, target, policy) : stale(state, target, policy);
    if (!write) {
      return;
    }
    try {
      write(client, target, before ? uid(policy) : null);
    } catch (KubernetesClientException e) {
      log.warn(
          "policy {}/{}: could not {} {} on StatefulSet {}: {}",
          policy.getMetadata().getNamespace(),
          policy.getMetadata().getName(),
          before ? "write" : "remove",
          ANNOTATION,
          target.getMetadata().getName(),
          e.getMessage());
      events.warn(
          client,
          policy,
          Reason.ActionFailed,
          "could not "
              + (before ? "write " : "remove ")
              + ANNOTATION
              + " on StatefulSet "
              + target.getMetadata().getName()
              + " (the roll's second record of the balancer; the status stays the first): "
              + e.getMessage());
    }
  }

  /**
   * The record of the context's policy goes, best effort (a failure is logged): its give-back done
   * or none owed, the balancer given back and the status written without it, or the policy let go.
   */
  static void forget(PolicyContext c) {
    forget(c, true);
  }

  /** The balancer's record only: the balancer is back, a server may still be marked. */
  static void forgetBalancer(PolicyContext c) {
    forget(c, false);
  }

  private static void forget(PolicyContext c, boolean marksToo) {
    StatefulSet target = c.target().orElse(null);
    boolean marks = marksToo && !recordedMarks(target, c.policy()).isEmpty();
    if (!recorded(target, c.policy()) && !marks) {
      return;
    }
    try {
      if (marks) {
        writeMarks(c.client(), target, null);
      }
      if (recorded(target, c.policy())) {
        write(c.client(), target, null);
      }
    } catch (RuntimeException e) {
      log.warn(
          "could not remove {} from StatefulSet {}/{}: {}",
          ANNOTATION,
          target.getMetadata().getNamespace(),
          target.getMetadata().getName(),
          e.toString());
    }
  }

  /** Writes (the policy's uid) or removes ({@code null}) the record: a merge patch of it alone. */
  static void write(KubernetesClient client, StatefulSet target, String uid) {
    patch(client, target, ANNOTATION, uid);
  }

  /** Writes or removes ({@code null}) the marks record. */
  static void writeMarks(KubernetesClient client, StatefulSet target, String value) {
    patch(client, target, MARKS, value);
  }

  private static void patch(KubernetesClient client, StatefulSet target, String key, String v) {
    String value = v == null ? "null" : Serialization.asJson(v);
    client
        .apps()
        .statefulSets()
        .inNamespace(target.getMetadata().getNamespace())
        .withName(target.getMetadata().getName())
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{\"" + key + "\":" + value + "}}}");
  }
}
