package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Sizes;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache PVCs of the file modes. A StatefulSet's volumeClaimTemplates are immutable, so adding
 * or growing the cache template means recreating the StatefulSet with orphan propagation (its pods
 * keep running and are adopted by the new one). The old object is saved to a ConfigMap first, so an
 * operator that dies between the delete and the create finishes the job on restart. PVCs are never
 * deleted; existing ones grow through the PVC itself when their StorageClass allows it.
 */
final class StorageManager {
  private static final Logger log = LoggerFactory.getLogger(StorageManager.class);
  static final String BACKUP_KEY = "statefulset.json";

  /** Storage is ready (all null/false), being recreated, or blocked with a reason. */
  record Outcome(boolean recreating, String message, String blocked) {
    static final Outcome READY = new Outcome(false, null, null);
  }

  static String backupName(BlockCachePolicy policy) {
    return policy.getMetadata().getName() + "-sts-backup";
  }

  Outcome ensureClaimTemplate(
      KubernetesClient client, BlockCachePolicy policy, StatefulSet sts, Plan plan, Events events) {
    String ns = policy.getMetadata().getNamespace();
    long needed = plan.pvcSize();
    String wantedClass = plan.volume().storageClassName();
    PersistentVolumeClaim existing =
        sts.getSpec().getVolumeClaimTemplates() == null
            ? null
            : sts.getSpec().getVolumeClaimTemplates().stream()
                .filter(t -> Desired.CACHE_VOLUME.equals(t.getMetadata().getName()))
                .findFirst()
                .orElse(null);
    if (existing != null) {
      String hadClass = existing.getSpec().getStorageClassName();
      if (wantedClass != null && !wantedClass.equals(hadClass)) {
        return blocked(
            "the cache PVCs of "
                + sts.getMetadata().getName()
                + " use StorageClass "
                + Objects.toString(hadClass, "(default)")
                + " and the policy asks for "
                + wantedClass
                + "; a PVC cannot change class and the operator never deletes PVCs: delete the"
                + " bucketcache-* PVCs yourself (the cache is lost) or keep the class");
      }
      long had = storage(existing);
      if (had >= needed) {
        return Outcome.READY;
      }
      // Grow: every existing PVC first (all or none), then the template.
      List<PersistentVolumeClaim> toGrow = new ArrayList<>();
      int replicas = sts.getSpec().getReplicas() == null ? 1 : sts.getSpec().getReplicas();
      for (int i = 0; i < replicas; i++) {
        String name = Desired.CACHE_VOLUME + "-" + sts.getMetadata().getName() + "-" + i;
        PersistentVolumeClaim pvc =
            client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
        if (pvc != null && storage(pvc) < needed) {
          String cls = pvc.getSpec().getStorageClassName();
          StorageClass sc =
              cls == null ? null : client.storage().v1().storageClasses().withName(cls).get();
          if (sc == null || !Boolean.TRUE.equals(sc.getAllowVolumeExpansion())) {
            return blocked(
                "the cache needs "
                    + Sizes.quantity(needed)
                    + " per RegionServer but PVC "
                    + name
                    + " has "
                    + Sizes.quantity(storage(pvc))
                    + " and StorageClass "
                    + Objects.toString(cls, "(none)")
                    + " does not allow volume expansion; lower memory.bucketCache or"
                    + " storage.size, or use a StorageClass with allowVolumeExpansion");
          }
          toGrow.add(pvc);
        }
      }
      for (PersistentVolumeClaim pvc : toGrow) {
        client
            .persistentVolumeClaims()
            .inNamespace(ns)
            .withName(pvc.getMetadata().getName())
            .edit(
                p -> {
                  p.getSpec()
                      .getResources()
                      .getRequests()
                      .put("storage", new Quantity(Sizes.quantity(needed)));
                  return p;
                });
        events.record(
            client,
            policy,
            false,
            "CacheVolumeExpanding",
            "PVC " + pvc.getMetadata().getName() + " grows to " + Sizes.quantity(needed));
      }
    }
    return recreate(client, policy, sts, plan, events);
  }

  private Outcome recreate(
      KubernetesClient client, BlockCachePolicy policy, StatefulSet sts, Plan plan, Events events) {
    String ns = policy.getMetadata().getNamespace();
    StatefulSet next = withClaimTemplate(sts, Desired.claimTemplate(plan));
    ConfigMap backup =
        Desired.configMap(
            policy, backupName(policy), Map.of(BACKUP_KEY, Serialization.asJson(next)));
    client.resource(backup).fieldManager(Desired.FIELD_MANAGER).forceConflicts().serverSideApply();
    client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName(sts.getMetadata().getName())
        .withPropagationPolicy(DeletionPropagation.ORPHAN)
        .delete();
    String msg =
        "recreating StatefulSet "
            + sts.getMetadata().getName()
            + " with a "
            + Sizes.quantity(plan.pvcSize())
            + " cache volume template (orphan delete: pods keep running, PVCs stay)";
    events.record(client, policy, false, "RecreatingStatefulSet", msg);
    return new Outcome(true, msg, null);
  }

  /** Creates the StatefulSet saved before the orphan delete, then drops the backup. */
  void finishRecreate(KubernetesClient client, BlockCachePolicy policy, ConfigMap backup) {
    StatefulSet next = Serialization.unmarshal(backup.getData().get(BACKUP_KEY), StatefulSet.class);
    try {
      client.resource(next).create();
      log.info(
          "recreated StatefulSet {}/{}",
          next.getMetadata().getNamespace(),
          next.getMetadata().getName());
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    client.resource(backup).delete();
  }

  /** The StatefulSet as it can be created again: same spec, the cache template set. */
  static StatefulSet withClaimTemplate(StatefulSet sts, PersistentVolumeClaim template) {
    StatefulSet copy = Serialization.clone(sts);
    copy.setStatus(null);
    copy.setMetadata(
        new ObjectMetaBuilder()
            .withName(sts.getMetadata().getName())
            .withNamespace(sts.getMetadata().getNamespace())
            .withLabels(sts.getMetadata().getLabels())
            .withAnnotations(sts.getMetadata().getAnnotations())
            .build());
    List<PersistentVolumeClaim> templates = new ArrayList<>();
    if (copy.getSpec().getVolumeClaimTemplates() != null) {
      for (PersistentVolumeClaim t : copy.getSpec().getVolumeClaimTemplates()) {
        if (!Desired.CACHE_VOLUME.equals(t.getMetadata().getName())) {
          t.setStatus(null);
          templates.add(t);
        }
      }
    }
    templates.add(template);
    copy.getSpec().setVolumeClaimTemplates(templates);
    return copy;
  }

  private static long storage(PersistentVolumeClaim pvc) {
    var req =
        pvc.getSpec().getResources() == null ? null : pvc.getSpec().getResources().getRequests();
    Quantity q = req == null ? null : req.get("storage");
    return q == null ? 0 : Sizes.bytes(q);
  }

  private static Outcome blocked(String message) {
    return new Outcome(false, null, message);
  }
}
