package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Sizes;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache PVCs of the file modes. A StatefulSet's volumeClaimTemplates are immutable, so adding
 * or growing the cache template means recreating the StatefulSet with orphan propagation (its pods
 * keep running and are adopted by the new one). The object to create again is saved in the policy's
 * status first ({@link RecreateStatus}, written in one reconcile, the delete in the next), so an
 * operator that dies between the delete and the create finishes the job on restart. PVCs are never
 * deleted; existing ones grow through the PVC itself when their StorageClass allows it.
 *
 * <p>Why a recreate creates only what the operator saved (issue 49): the status is not the
 * operator's alone (under {@code scope=Prerequisites} every namespace admin may write it), so the
 * manifest there is trusted only as far as the operator's own record vouches for it ({@link
 * RecreateLedger}, a ConfigMap in the operator's namespace, which tenants cannot write). The record
 * is written right before the orphan delete, from the manifest the operator computed from the live
 * StatefulSet that reconcile (same UID and resourceVersion as the delete's preconditions), and
 * binds the policy's UID, namespace and name, the StatefulSet's name and UID, when it was saved and
 * the manifest's SHA-256. A create needs all of them to match: a status written by anyone else (a
 * privileged pod template, another image, for the target's name) is refused with {@code
 * Degraded}/{@code UntrustedBackup} and a Warning, and nothing is created. A copy of an old record
 * cannot be replayed: the entry goes once its recreate is done or dropped ({@link
 * RecreateLedger#settled}) and with the policy. The record lives in the API server, so a restart
 * between the delete and the create, or another replica taking the lead, finishes the recreate as
 * before. Where the operator shares its namespace with the tenant (a {@code scope=Namespace}
 * install) the tenant can write the record too; there the namespace's editors can run pods as the
 * operator's service account anyway, and its Role holds no right the admin who installed it does
 * not.
 */
final class StorageManager {
  private static final Logger log = LoggerFactory.getLogger(StorageManager.class);

  private final RecreateLedger ledger;

  StorageManager(RecreateLedger ledger) {
    this.ledger = ledger;
  }

  /**
   * The observation, or, for a recreate interrupted between its delete and its create, the same
   * once the create is sent, or {@code UntrustedBackup} when the operator's record does not vouch
   * for it ({@link #finishRecreate}).
   */
  Observation finishInterrupted(
      KubernetesClient client, BlockCachePolicy policy, Observation seen) {
    if (seen instanceof Observation.Unobservable u
        && u.why() == Observation.Why.RecreateInterrupted) {
      String refused = finishRecreate(client, policy, u.recreate());
      if (refused != null) {
        return new Observation.Unobservable(Observation.Why.UntrustedBackup, refused);
      }
    }
    return seen;
  }

  RecreateLedger ledger() {
    return ledger;
  }

  /** Storage is ready (all null/false), being recreated, or blocked with a reason. */
  record Outcome(boolean recreating, String message, String blocked) {
    static final Outcome READY = new Outcome(false, null, null);
  }

  /**
   * Where earlier versions of the operator saved the StatefulSet: a ConfigMap of this name is never
   * read (a policy author can write one); one found while the target is missing is reported as
   * untrusted.
   */
  static String legacyBackupName(BlockCachePolicy policy) {
    return policy.getMetadata().getName() + "-sts-backup";
  }

  /**
   * @param status the status being built: where a recreate saves the StatefulSet before deleting it
   */
  Outcome ensureClaimTemplate(
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet sts,
      Plan plan,
      Events events,
      BlockCachePolicyStatus status) {
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
      int replicas = Observation.replicas(sts);
      for (int i = 0; i < replicas; i++) {
        String name = Desired.CACHE_VOLUME + "-" + sts.getMetadata().getName() + "-" + i;
        PersistentVolumeClaim pvc =
            client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
        if (pvc != null && storage(pvc) < needed) {
          if (!ourClaim(pvc)) {
            return blocked(
                "PVC "
                    + name
                    + " was not made from the operator's cache volume template (no label "
                    + Desired.MANAGED_BY
                    + "="
                    + Desired.FIELD_MANAGER
                    + "): the operator does not grow it");
          }
          String cls = pvc.getSpec().getStorageClassName();
          StorageClass sc;
          try {
            sc = cls == null ? null : client.storage().v1().storageClasses().withName(cls).get();
          } catch (KubernetesClientException e) {
            if (e.getCode() != 403) {
              throw e;
            }
            // a namespace-scoped install reads no cluster-scoped object: the PVC patch below is
            // refused by the API server if the class does not allow expansion, and the refusal
            // is the reconcile's error
            sc = new StorageClass();
            sc.setAllowVolumeExpansion(true);
          }
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
            Reason.CacheVolumeExpanding,
            "PVC " + pvc.getMetadata().getName() + " grows to " + Sizes.quantity(needed));
      }
    }
    return recreate(client, policy, sts, plan, events, status);
  }

  /**
   * Two steps: save the StatefulSet to create again in the status (this reconcile writes it), then,
   * once the status holds it for this very object (same UID, same manifest), the orphan delete,
   * conditional on the resourceVersion the informer showed.
   */
  private Outcome recreate(
      KubernetesClient client,
      BlockCachePolicy policy,
      StatefulSet sts,
      Plan plan,
      Events events,
      BlockCachePolicyStatus status) {
    StatefulSet next = withClaimTemplate(sts, Desired.claimTemplate(plan));
    String manifest = Serialization.asJson(next);
    // what the last written status holds: the delete goes out only once that has it
    RecreateStatus saved = policy.getStatus() == null ? null : policy.getStatus().getRecreate();
    String name = sts.getMetadata().getName();
    if (saved == null
        || !name.equals(saved.getStatefulSet())
        || !sts.getMetadata().getUid().equals(saved.getUid())
        || !manifest.equals(saved.getManifest())) {
      status.setRecreate(
          new RecreateStatus()
              .setStatefulSet(name)
              .setUid(sts.getMetadata().getUid())
              .setManifest(manifest)
              .setSavedAt(Instant.now().toString()));
      return new Outcome(
          true,
          "saving StatefulSet "
              + name
              + " in the policy's status before recreating it with a "
              + Sizes.quantity(plan.pvcSize())
              + " cache volume template",
          null);
    }
    status.setRecreate(saved); // kept until the StatefulSet exists again under a new UID
    // the status holds what was computed from this very StatefulSet (checked above): the
    // operator's own record of it goes first, the one thing a create from the status trusts
    ledger.record(client, policy, saved);
    orphanDelete(client, sts);
    String msg =
        "recreating StatefulSet "
            + name
            + " with a "
            + Sizes.quantity(plan.pvcSize())
            + " cache volume template (orphan delete: pods keep running, PVCs stay)";
    events.record(client, policy, false, Reason.RecreatingStatefulSet, msg);
    return new Outcome(true, msg, null);
  }

  /**
   * Why the recreate saved in the status cannot be finished for this policy, or null: it must name
   * the policy's target and hold a StatefulSet of that name. The namespace is always the policy's.
   */
  static String untrusted(BlockCachePolicy policy, RecreateStatus saved) {
    String target = policy.getSpec().getTargetRef().getName();
    if (!target.equals(saved.getStatefulSet())) {
      return "status.recreate saved StatefulSet "
          + saved.getStatefulSet()
          + " but the policy's target is now "
          + target
          + ": not created; set targetRef.name back to "
          + saved.getStatefulSet()
          + " to finish the recreate";
    }
    try {
      StatefulSet next = Serialization.unmarshal(saved.getManifest(), StatefulSet.class);
      if (next == null
          || next.getMetadata() == null
          || !target.equals(next.getMetadata().getName())) {
        return "status.recreate holds no StatefulSet named " + target + ": not created";
      }
    } catch (RuntimeException e) {
      return "status.recreate holds no readable StatefulSet: " + e.getMessage();
    }
    return null;
  }

  /**
   * Creates the StatefulSet saved before the orphan delete (its name checked by {@link
   * #untrusted}), in the policy's namespace whatever the manifest says, if the operator's record
   * vouches for it; else creates nothing and returns why.
   */
  String finishRecreate(KubernetesClient client, BlockCachePolicy policy, RecreateStatus saved) {
    String notOurs = ledger.untrusted(client, policy, saved);
    if (notOurs != null) {
      return "status.recreate holds StatefulSet "
          + saved.getStatefulSet()
          + " to create, but "
          + notOurs
          + ": not created (the status is writable by more than the operator). If the recreate"
          + " is yours, check status.recreate.manifest and create the StatefulSet yourself";
    }
    StatefulSet next = Serialization.unmarshal(saved.getManifest(), StatefulSet.class);
    next.getMetadata().setNamespace(policy.getMetadata().getNamespace());
    next.getMetadata().setUid(null);
    next.getMetadata().setResourceVersion(null);
    next.getMetadata().setOwnerReferences(null);
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
    return null;
  }

  /**
   * Deletes exactly the StatefulSet observed (UID and resourceVersion preconditions: a StatefulSet
   * replaced or changed since is not deleted, 409) with orphan propagation. fabric8's DSL offers
   * the propagation policy or the lock, not both: one DELETE with the whole DeleteOptions.
   */
  static void orphanDelete(KubernetesClient client, StatefulSet sts) {
    var meta = sts.getMetadata();
    String body =
        Serialization.asJson(
            Map.of(
                "apiVersion",
                "v1",
                "kind",
                "DeleteOptions",
                "propagationPolicy",
                DeletionPropagation.ORPHAN.toString(),
                "preconditions",
                Map.of("uid", meta.getUid(), "resourceVersion", meta.getResourceVersion())));
    String url =
        client.getMasterUrl().toString().replaceAll("/+$", "")
            + "/apis/apps/v1/namespaces/"
            + meta.getNamespace()
            + "/statefulsets/"
            + meta.getName();
    var http = client.getHttpClient();
    var request =
        http.newHttpRequestBuilder().uri(url).method("DELETE", "application/json", body).build();
    try {
      var response = http.sendAsync(request, String.class).get(30, TimeUnit.SECONDS);
      if (response.code() >= 300 && response.code() != 404) {
        throw new KubernetesClientException(
            "orphan delete of StatefulSet " + meta.getName() + ": " + response.body(),
            response.code(),
            null);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted", e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new KubernetesClientException("orphan delete of StatefulSet " + meta.getName(), e);
    }
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

  /** A claim the StatefulSet controller made from the operator's template (its labels). */
  static boolean ourClaim(PersistentVolumeClaim pvc) {
    var labels = pvc.getMetadata().getLabels();
    return labels != null && Desired.FIELD_MANAGER.equals(labels.get(Desired.MANAGED_BY));
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
