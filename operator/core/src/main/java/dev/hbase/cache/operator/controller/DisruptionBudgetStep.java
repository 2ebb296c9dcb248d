package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.roll.Roller;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The disruption budget step: a PodDisruptionBudget for the RegionServers, so that evictions the
 * operator does not cause (node drains, the cluster autoscaler) wait while the roll or anything
 * else has servers down. It allows what the roller allows ({@link Roller#budget}), selects what the
 * StatefulSet selects and is owned by the policy (deleted with it). None is kept when {@code
 * rollout.podDisruptionBudget} is false, or when another budget already selects the pods: two
 * budgets on one pod make the Eviction API refuse every eviction of it.
 */
final class DisruptionBudgetStep {
  private final Events events;

  DisruptionBudgetStep(Events events) {
    this.events = events;
  }

  static String name(BlockCachePolicy policy) {
    return policy.getMetadata().getName() + "-regionservers";
  }

  static boolean enabled(BlockCachePolicy policy) {
    RolloutSpec r = policy.getSpec().getRollout();
    return r == null || !Boolean.FALSE.equals(r.getPodDisruptionBudget());
  }

  /** What to do: keep {@code desired} (null: have none), and why not when there are others. */
  record Decision(PodDisruptionBudget desired, List<String> others) {}

  /** Pure: the budget to keep given the target and the budgets of its namespace. */
  static Decision decide(
      BlockCachePolicy policy, StatefulSet target, List<PodDisruptionBudget> existing) {
    Map<String, String> podLabels = target.getSpec().getTemplate().getMetadata().getLabels();
    List<String> others =
        existing.stream()
            .filter(b -> !name(policy).equals(b.getMetadata().getName()))
            .filter(
                b ->
                    tooLarge(b) != null
                        || b.getSpec() != null && selects(b.getSpec().getSelector(), podLabels))
            .map(
                b ->
                    b.getMetadata().getName()
                        + (tooLarge(b) == null
                            ? ""
                            : " (a selector of "
                                + tooLarge(b)
                                + " bytes, not evaluated: taken to select them)"))
            .sorted()
            .toList();
    if (!enabled(policy) || !others.isEmpty()) {
      return new Decision(null, others);
    }
    RolloutSpec r = policy.getSpec().getRollout();
    int maxUnavailable =
        Roller.budget(
            r == null ? RolloutSpec.DEFAULT_MAX_UNAVAILABLE : r.maxUnavailableOrDefault(),
            Observation.replicas(target));
    PodDisruptionBudget pdb =
        new PodDisruptionBudgetBuilder()
            .withNewMetadata()
            .withName(name(policy))
            .withNamespace(policy.getMetadata().getNamespace())
            .addToLabels(Desired.MANAGED_BY, Desired.FIELD_MANAGER)
            .addToLabels(Desired.POLICY_LABEL, policy.getMetadata().getName())
            .withOwnerReferences(
                new OwnerReferenceBuilder()
                    .withApiVersion(policy.getApiVersion())
                    .withKind(policy.getKind())
                    .withName(policy.getMetadata().getName())
                    .withUid(policy.getMetadata().getUid())
                    .withController(true)
                    .withBlockOwnerDeletion(true)
                    .build())
            .endMetadata()
            .withNewSpec()
            .withSelector(target.getSpec().getSelector())
            .withMaxUnavailable(new IntOrString(maxUnavailable))
            .endSpec()
            .build();
    return new Decision(pdb, others);
  }

  /**
   * Keeps the policy's budget; returns why not when a budget of its name exists and is not the
   * policy's (owned by another object or by none): it is left alone, never taken over.
   */
  String apply(PolicyContext c, StatefulSet target) {
    KubernetesClient client = c.client();
    BlockCachePolicy policy = c.policy();
    String ns = c.namespace();
    // the namespace's budgets only: the cache's list by namespace was seen to return another
    // namespace's budget of the same name (NoisyNeighbourIT: quiet/cache-regionservers listed for
    // noisy), so the namespace is checked here too
    List<PodDisruptionBudget> existing =
        c.informers().budgets().list(ns, b -> ns.equals(b.getMetadata().getNamespace())).toList();
    PodDisruptionBudget named =
        existing.stream()
            .filter(b -> name(policy).equals(b.getMetadata().getName()))
            .findFirst()
            .orElse(null);
    if (named != null && !ownedBy(named, policy)) {
      String why =
          "PodDisruptionBudget "
              + ns
              + "/"
              + name(policy)
              + " exists and is not this policy's (no ownerReference to it): the operator keeps"
              + " no budget for the RegionServers and leaves that one alone; rename or delete it";
      events.once(client, policy, "", true, Reason.ObjectNotOwned, why);
      return why;
    }
    Decision d = decide(policy, target, existing);
    PodDisruptionBudget ours =
        existing.stream()
            .filter(b -> name(policy).equals(b.getMetadata().getName()))
            .findFirst()
            .orElse(null);
    if (!d.others().isEmpty()) {
      events.once(
          client,
          policy,
          "",
          false,
          Reason.PodDisruptionBudgetExists,
          "the RegionServer pods are already selected by PodDisruptionBudget "
              + String.join(", ", d.others())
              + ": the operator keeps none of its own (two budgets on a pod refuse every eviction)");
    }
    if (d.desired() == null) {
      if (ours != null && ownedBy(ours, policy)) {
        delete(client, policy);
      }
      return null;
    }
    if (ours == null || !InSync.covers(ours, d.desired())) {
      ServerSideApply.apply(client, d.desired());
    }
    return null;
  }

  /** Deletes the policy's budget if it is the policy's own (never a budget someone else made). */
  void deleteOwn(PolicyContext c) {
    BlockCachePolicy policy = c.policy();
    c.informers()
        .budgets()
        .get(new ResourceID(name(policy), c.namespace()))
        .filter(b -> ownedBy(b, policy))
        .ifPresent(b -> delete(c.client(), policy));
  }

  static void delete(KubernetesClient client, BlockCachePolicy policy) {
    client
        .policy()
        .v1()
        .podDisruptionBudget()
        .inNamespace(policy.getMetadata().getNamespace())
        .withName(name(policy))
        .delete();
  }

  static boolean ownedBy(PodDisruptionBudget b, BlockCachePolicy policy) {
    return b.getMetadata().getOwnerReferences() != null
        && b.getMetadata().getOwnerReferences().stream()
            .anyMatch(o -> Objects.equals(o.getUid(), policy.getMetadata().getUid()));
  }

  /**
   * The size of a budget's selector that the operator's cache did not keep ({@link
   * Informers#budgetSummary}), or null.
   */
  static String tooLarge(PodDisruptionBudget b) {
    var a = b.getMetadata().getAnnotations();
    return a == null ? null : a.get(Informers.SELECTOR_TOO_LARGE);
  }

  /**
   * A label selector against pod labels, as the API server evaluates it (policy/v1: an empty
   * selector selects every pod of the namespace, a missing one none).
   */
  static boolean selects(LabelSelector s, Map<String, String> labels) {
    if (s == null) {
      return false;
    }
    Map<String, String> l = labels == null ? Map.of() : labels;
    if (s.getMatchLabels() != null
        && !s.getMatchLabels().entrySet().stream()
            .allMatch(e -> Objects.equals(l.get(e.getKey()), e.getValue()))) {
      return false;
    }
    if (s.getMatchExpressions() != null) {
      for (LabelSelectorRequirement r : s.getMatchExpressions()) {
        String v = l.get(r.getKey());
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        boolean ok =
            switch (r.getOperator()) {
              case "In" -> v != null && values.contains(v);
              case "NotIn" -> v == null || !values.contains(v);
              case "Exists" -> l.containsKey(r.getKey());
              case "DoesNotExist" -> !l.containsKey(r.getKey());
              default -> false;
            };
        if (!ok) {
          return false;
        }
      }
    }
    return true;
  }
}
