package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.util.List;
import java.util.Set;

/** What the observe step saw of a policy's target: everything needed to plan, or why not. */
sealed interface Observation {

  /**
   * The target as the informer caches show it.
   *
   * @param target the RegionServer StatefulSet
   * @param base the base hbase-site ConfigMap (spec.hbaseSiteConfigMap)
   * @param container the RegionServer container of the pod template
   * @param configVolume the template's volume that mounts the base (or already the derived)
   *     ConfigMap: the operator points it at the derived one
   * @param pods the StatefulSet's pods below its replicas, by ordinal
   * @param cacheMapRemovals what the cache-map-guards of the pods reported
   * @param leaving the pods at or above replicas (a scale-down removes them), by ordinal
   * @param siteKeysInUse the keys of the derived RegionServer ConfigMap that the template's and the
   *     pods' volumes name ({@link dev.hbase.cache.operator.render.RevisionFiles#keysInUse}); null:
   *     not known for sure, none may go
   */
  record Observed(
      BlockCachePolicy policy,
      StatefulSet target,
      ConfigMap base,
      Container container,
      String configVolume,
      List<PodView> pods,
      List<CacheMapRemoval> cacheMapRemovals,
      List<PodView> leaving,
      Set<String> siteKeysInUse)
      implements Observation {

    Observed(
        BlockCachePolicy policy,
        StatefulSet target,
        ConfigMap base,
        Container container,
        String configVolume,
        List<PodView> pods,
        List<CacheMapRemoval> cacheMapRemovals,
        List<PodView> leaving) {
      this(policy, target, base, container, configVolume, pods, cacheMapRemovals, leaving, null);
    }

    Observed(
        BlockCachePolicy policy,
        StatefulSet target,
        ConfigMap base,
        Container container,
        String configVolume,
        List<PodView> pods,
        List<CacheMapRemoval> cacheMapRemovals) {
      this(policy, target, base, container, configVolume, pods, cacheMapRemovals, List.of());
    }

    String namespace() {
      return policy.getMetadata().getNamespace();
    }

    int replicas() {
      return Observation.replicas(target);
    }
  }

  /** The StatefulSet's replicas: 1 when unset, as the API server defaults it. */
  static int replicas(StatefulSet sts) {
    return sts.getSpec().getReplicas() == null ? 1 : sts.getSpec().getReplicas();
  }

  /**
   * A pod's cache-map-guard removed its BucketCache persistence map before HBase read it ({@link
   * CacheMapReports}).
   *
   * @param pod the pod
   * @param reason why: {@link CacheMapReports#REASONS}
   * @param at when: the init container's end, or the start of the container whose postStart hook
   *     removed it (one report per start)
   * @param when which start, in words
   * @param message the guard's message after the reason
   */
  record CacheMapRemoval(String pod, Reason reason, String at, String when, String message) {}

  /**
   * The target cannot be planned for now; {@code recreate} is set for {@link
   * Why#RecreateInterrupted}: the StatefulSet the status saved, checked to be the policy's target.
   */
  record Unobservable(Why why, String message, RecreateStatus recreate) implements Observation {
    Unobservable(Why why, String message) {
      this(why, message, null);
    }
  }

  /** Why a target cannot be observed. The invalid ones need a change by the user. */
  enum Why {
    TargetNotFound(true),
    /** Another policy, created earlier, manages the same StatefulSet. */
    Conflict(true),
    ContainerNotFound(true),
    BaseConfigNotFound(true),
    ConfigVolumeNotFound(true),
    /** The StatefulSet is being deleted (orphan) for a recreate with the cache volume template. */
    RecreatingStatefulSet(false),
    /** The StatefulSet was deleted for a recreate and not created again yet: finish it. */
    RecreateInterrupted(false),
    /**
     * The target is missing and something that is not the operator's own would have it created: a
     * ConfigMap named like the old backups, a saved recreate for another target, or one its own
     * record of recreates does not vouch for ({@link RecreateLedger}). Nothing is created; Degraded
     * names the object.
     */
    UntrustedBackup(true);

    final boolean invalid;

    Why(boolean invalid) {
      this.invalid = invalid;
    }
  }
}
