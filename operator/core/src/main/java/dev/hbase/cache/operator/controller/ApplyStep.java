package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.spec.MasterRef;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.controller.PlanStep.Planned;
import dev.hbase.cache.operator.plan.MasterSite;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.RevisionFiles;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The apply step: the derived ConfigMap (the files of each revision a pod runs, {@link
 * RevisionFiles}), the cache volume, the StatefulSet fields the operator owns, and the master's
 * keys. Each write is skipped when the informer cache already shows the desired state ({@link
 * InSync}): an idle cluster gets no PATCH.
 */
final class ApplyStep {
  private static final Logger log = LoggerFactory.getLogger(ApplyStep.class);

  sealed interface Outcome {}

  /** Everything is in place: the roll may run. */
  record Applied() implements Outcome {}

  /**
   * The StatefulSet's fields were written (the policy's first apply or a new plan, or another
   * manager such as {@code helm upgrade} had put its own values back): the roll waits for the
   * informer and the StatefulSet controller to show the result, so a pod template another manager
   * wrote for a moment never starts a restart.
   */
  record TargetPatched() implements Outcome {}

  /** The StatefulSet is being recreated with the cache volume template: look again soon. */
  record Recreating(String message) implements Outcome {}

  /** The cache volume cannot be provided as planned; nothing was changed. */
  record StorageBlocked(String message) implements Outcome {}

  /**
   * The derived RegionServer ConfigMap would exceed {@link RevisionFiles#MAX_BYTES} with the files
   * of every revision a pod still runs: nothing was written, no key a pod needs was dropped.
   */
  record SiteTooLarge(String message) implements Outcome {}

  /**
   * An object the operator would write under a name it derives from the policy exists and is not
   * the operator's for this policy (another team's ConfigMap named {@code <policy>-rs-site}, say):
   * nothing was written over it.
   */
  record NotOwned(String message) implements Outcome {}

  private final StorageManager storage;
  private final Events events;

  ApplyStep(StorageManager storage, Events events) {
    this.storage = storage;
    this.events = events;
  }

  /**
   * @param status the status being built (a recreate saves the StatefulSet there first)
   */
  Outcome apply(PolicyContext c, Observed o, Planned p, BlockCachePolicyStatus status) {
    BlockCachePolicy policy = o.policy();
    KubernetesClient client = c.client();
    String name = Desired.regionServerConfigMapName(policy);
    ConfigMap had = c.configMap(name).orElse(null);
    RevisionFiles.Layout layout =
        RevisionFiles.layout(p.siteData(), had == null ? null : had.getData(), o.siteKeysInUse());
    ConfigMap derived = Desired.siteConfigMap(policy, name, layout.data());
    if (!layout.missing().isEmpty() || !InSync.configMap(had, derived)) {
      // a write, or keys the cache does not show: decided on the API server's copies, not the
      // caches, as a whole-data apply removes every key it leaves out (a cache without the
      // operator's last write, or a pod just made from an older template, would otherwise lose a
      // key a pod names)
      ConfigMap live = client.configMaps().inNamespace(o.namespace()).withName(name).get();
      StatefulSet sts =
          client
              .apps()
              .statefulSets()
              .inNamespace(o.namespace())
              .withName(o.target().getMetadata().getName())
              .get();
      if (sts != null && sts.getSpec().getSelector() != null) {
        List<Pod> pods =
            client
                .pods()
                .inNamespace(o.namespace())
                .withLabels(sts.getSpec().getSelector().getMatchLabels())
                .list()
                .getItems();
        had = live;
        layout =
            RevisionFiles.layout(
                p.siteData(),
                live == null ? null : live.getData(),
                RevisionFiles.keysInUse(sts, pods, name));
        derived = Desired.siteConfigMap(policy, name, layout.data());
      }
      if (!layout.missing().isEmpty()) {
        log.warn(
            "ConfigMap {}/{} lacks keys that pods of {} name in their config volume, and cannot be"
                + " given them (their content is gone): {}",
            o.namespace(),
            name,
            o.target().getMetadata().getName(),
            layout.missing());
      }
    }
    if (had != null && !ours(had, policy, derived)) {
      return new NotOwned(notOwned(had));
    }
    if (policy.getSpec().getMasterRef() != null) {
      ConfigMap master = c.configMap(Desired.masterConfigMapName(policy)).orElse(null);
      if (master != null && !ours(master, policy, null)) {
        return new NotOwned(notOwned(master));
      }
    }
    if (!layout.fits()) {
      return new SiteTooLarge(tooLarge(o, p, derived, layout));
    }
    if (!InSync.configMap(had, derived)) {
      // a server-side apply of the whole data: a key of a revision no pod runs any more, which
      // the operator applied before and leaves out now, is removed
      ServerSideApply.apply(client, derived);
    }
    if (p.plan().pvcSize() > 0) {
      StorageManager.Outcome s =
          storage.ensureClaimTemplate(client, policy, o.target(), p.plan(), events, status);
      if (s.blocked() != null) {
        return new StorageBlocked(s.blocked());
      }
      if (s.recreating()) {
        return new Recreating(s.message());
      }
    }
    boolean patched = ensureOnDelete(client, o.target());
    var template = o.target().getSpec().getTemplate();
    StatefulSet patch =
        Desired.regionServerPatch(
            policy,
            p.plan(),
            p.revision(),
            o.container(),
            o.configVolume(),
            template.getSpec().getSecurityContext(),
            dev.hbase.cache.operator.metrics.MetricsCollector.infoPort(policy),
            RevisionFiles.items(
                p.siteData(),
                template.getSpec().getVolumes().stream()
                    .filter(v -> o.configVolume().equals(v.getName()))
                    .findFirst()
                    .orElse(null),
                template.getMetadata() == null || template.getMetadata().getAnnotations() == null
                    ? null
                    : template.getMetadata().getAnnotations().get(Desired.HASH_ANNOTATION),
                p.revision()));
    // the object observed, not a successor of the same name: the API server refuses an apply whose
    // metadata.uid is not the object's
    patch.getMetadata().setUid(o.target().getMetadata().getUid());
    if (!InSync.covers(o.target(), patch)) {
      ServerSideApply.apply(client, patch);
      patched = true;
    }
    if (policy.getSpec().getMasterRef() != null) {
      applyMaster(
          c,
          o.base(),
          p.plan(),
          !MasterSite.unseen(policy.getSpec(), status == null ? null : status.getMasterVersion()));
    }
    return patched ? new TargetPatched() : new Applied();
  }

  /**
   * The API server defaults updateStrategy.rollingUpdate on every StatefulSet, owned by whoever
   * created it; server-side apply cannot set type OnDelete while that field stays. Replace the
   * strategy once with a JSON merge patch (type OnDelete, rollingUpdate removed): idempotent, so no
   * optimistic lock is needed, and it needs only the {@code patch} verb the chart's RBAC grants (an
   * update/PUT is forbidden there).
   */
  private static boolean ensureOnDelete(KubernetesClient client, StatefulSet sts) {
    var strategy = sts.getSpec().getUpdateStrategy();
    if (strategy != null
        && "OnDelete".equals(strategy.getType())
        && strategy.getRollingUpdate() == null) {
      return false;
    }
    client
        .apps()
        .statefulSets()
        .inNamespace(sts.getMetadata().getNamespace())
        .withName(sts.getMetadata().getName())
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":null}}}");
    return true;
  }

  /**
   * A ConfigMap the operator derived for this policy: its managed-by and policy labels, no binary
   * data, and no key the operator would not write ({@code desired}'s, when given). Pods from before
   * the per-revision keys mount the whole ConfigMap as the RegionServers' config directory, and a
   * server-side apply leaves keys it does not send: a ConfigMap planted under the derived name with
   * an extra file (a log4j2.component.properties, a core-site.xml) would reach the pods.
   */
  static boolean ours(ConfigMap cm, BlockCachePolicy policy, ConfigMap desired) {
    var labels = cm.getMetadata().getLabels();
    boolean labelled =
        labels != null
            && Desired.FIELD_MANAGER.equals(labels.get(Desired.MANAGED_BY))
            && policy.getMetadata().getName().equals(labels.get(Desired.POLICY_LABEL));
    boolean noBinary = cm.getBinaryData() == null || cm.getBinaryData().isEmpty();
    boolean noForeignKeys =
        desired == null
            || cm.getData() == null
            || cm.getData().keySet().stream()
                .allMatch(k -> desired.getData().containsKey(k) || appliedByUs(cm, k));
    return labelled && noBinary && noForeignKeys;
  }

  /**
   * Whether data key {@code key} was written by the operator's own server-side apply (its
   * managedFields entry): such a key, gone from the base, the next apply removes; any other key the
   * apply would leave in place.
   */
  @SuppressWarnings("unchecked")
  static boolean appliedByUs(ConfigMap cm, String key) {
    var fields = cm.getMetadata().getManagedFields();
    if (fields == null) {
      return false;
    }
    return fields.stream()
        .filter(
            f -> Desired.FIELD_MANAGER.equals(f.getManager()) && "Apply".equals(f.getOperation()))
        .filter(f -> f.getFieldsV1() != null && f.getFieldsV1().getAdditionalProperties() != null)
        .map(f -> f.getFieldsV1().getAdditionalProperties().get("f:data"))
        .anyMatch(d -> d instanceof Map<?, ?> m && m.containsKey("f:" + key));
  }

  private static String tooLarge(
      Observed o, Planned p, ConfigMap derived, RevisionFiles.Layout layout) {
    List<String> behind =
        o.pods().stream()
            .filter(x -> !p.revision().equals(x.revision()))
            .map(PodView::name)
            .toList();
    return "ConfigMap "
        + o.namespace()
        + "/"
        + derived.getMetadata().getName()
        + " would hold "
        + kib(layout.bytes())
        + " KiB, above the operator's bound of "
        + kib(RevisionFiles.MAX_BYTES)
        + " KiB: the new plan's files take "
        + kib(2 * RevisionFiles.size(p.siteData()))
        + " KiB (under their names and under their revision's keys), the files of older plans"
        + " that pods still run the rest"
        + (behind.isEmpty() ? "" : " (pods not on the new plan: " + String.join(", ", behind) + ")")
        + ". Nothing was written and no pod restarts for this plan: set the spec back to the plan"
        + " being rolled onto and let that roll finish first, or delete the pods of older plans"
        + " (they come back on the StatefulSet's template); a base ConfigMap of more than about "
        + kib(RevisionFiles.MAX_BYTES / 2)
        + " KiB does not fit at all";
  }

  private static long kib(long bytes) {
    return (bytes + 1023) / 1024;
  }

  private static String notOwned(ConfigMap cm) {
    return "ConfigMap "
        + cm.getMetadata().getNamespace()
        + "/"
        + cm.getMetadata().getName()
        + " exists and is not the operator's for this policy (labels "
        + Desired.MANAGED_BY
        + "="
        + Desired.FIELD_MANAGER
        + " and "
        + Desired.POLICY_LABEL
        + "=<policy>, no key the operator did not write, no binaryData): the operator writes"
        + " nothing over it; rename the policy or the ConfigMap";
  }

  /**
   * The master's derived ConfigMap and its config volume (the master is not rolled).
   *
   * @param point whether to point the master's config volume at the derived ConfigMap: not while
   *     its keys wait for the master's version to be seen ({@link MasterSite#unseen}), so that the
   *     restart the repointing causes is onto the keys of its line, once
   */
  private void applyMaster(PolicyContext c, ConfigMap base, Plan plan, boolean point) {
    KubernetesClient client = c.client();
    BlockCachePolicy policy = c.policy();
    MasterRef ref = policy.getSpec().getMasterRef();
    String ns = policy.getMetadata().getNamespace();
    Map<String, String> data =
        Desired.siteData(
            base.getData(),
            plan.masterSite(),
            Set.of(),
            "hbase-site.xml of "
                + base.getMetadata().getName()
                + " with the master keys of BlockCachePolicy "
                + policy.getMetadata().getName());
    ConfigMap derived = Desired.siteConfigMap(policy, Desired.masterConfigMapName(policy), data);
    if (!InSync.configMap(c.configMap(derived.getMetadata().getName()).orElse(null), derived)) {
      ServerSideApply.apply(client, derived);
    }
    boolean deployment = ref.getKind() == MasterRef.Kind.Deployment;
    HasMetadata workload =
        deployment
            ? client.apps().deployments().inNamespace(ns).withName(ref.getName()).get()
            : client.apps().statefulSets().inNamespace(ns).withName(ref.getName()).get();
    if (workload == null) {
      events.warn(
          client,
          policy,
          Reason.MasterNotFound,
          (deployment ? "Deployment " : "StatefulSet ") + ref.getName() + " not found");
      return;
    }
    PodSpec podSpec =
        deployment
            ? ((Deployment) workload).getSpec().getTemplate().getSpec()
            : ((StatefulSet) workload).getSpec().getTemplate().getSpec();
    Optional<String> volume =
        Observer.configVolume(
            podSpec,
            base.getMetadata().getName(),
            Desired.masterConfigMapName(policy),
            name -> c.configMap(name).orElse(null));
    if (volume.isEmpty()) {
      events.warn(
          client,
          policy,
          Reason.MasterConfigVolumeNotFound,
          ref.getName()
              + " mounts no volume from ConfigMap "
              + base.getMetadata().getName()
              + ": master keys not applied");
      return;
    }
    if (!point) {
      return;
    }
    var patch =
        Map.of(
            "apiVersion",
            "apps/v1",
            "kind",
            deployment ? "Deployment" : "StatefulSet",
            "metadata",
            Map.of("name", ref.getName(), "namespace", ns, "uid", workload.getMetadata().getUid()),
            "spec",
            Map.of(
                "template",
                Map.of(
                    "spec",
                    Map.of("volumes", List.of(Desired.masterConfigVolume(policy, volume.get()))))));
    HasMetadata desired =
        deployment
            ? Serialization.unmarshal(Serialization.asJson(patch), Deployment.class)
            : Serialization.unmarshal(Serialization.asJson(patch), StatefulSet.class);
    if (!InSync.covers(workload, desired)) {
      ServerSideApply.apply(client, desired);
    }
  }
}
