package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.operator.controller.Observation.CacheMapRemoval;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.controller.Observation.Unobservable;
import dev.hbase.cache.operator.controller.Observation.Why;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.RevisionFiles;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.readiness.Readiness;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The observe step: the policy's StatefulSet, base ConfigMap and pods from the informer caches,
 * checked for what planning needs. Reads only; no API call.
 *
 * <p>Over ~400 lines (about 460) because it is the one place that turns Kubernetes objects into the
 * roller's pure views: {@link #observe} and the pod views ({@link #podViews}, {@link #leaving},
 * {@link #targetPods}, {@link #podView}: readiness, revision, claims, why a pod stopped, its DNS
 * name) read the same objects, and splitting them would put the pod's reading in two places.
 */
final class Observer {
  private static final Set<String> STUCK_REASONS =
      Set.of(
          "CrashLoopBackOff",
          "ImagePullBackOff",
          "ErrImagePull",
          "InvalidImageName",
          "CreateContainerConfigError",
          "CreateContainerError");

  private Observer() {}

  /**
   * The policy that manages the StatefulSet when several name it: the oldest (then by name). The
   * others touch nothing.
   */
  static Optional<BlockCachePolicy> owner(Informers in, BlockCachePolicy policy) {
    String target = policy.getSpec().getTargetRef().getName();
    return in.policies()
        .list(policy.getMetadata().getNamespace())
        .filter(
            p ->
                p.getMetadata().getDeletionTimestamp() == null
                    || p.getMetadata().getUid().equals(policy.getMetadata().getUid()))
        .filter(
            p ->
                p.getSpec() != null
                    && p.getSpec().getTargetRef() != null
                    && target.equals(p.getSpec().getTargetRef().getName()))
        .min(
            Comparator.comparing(
                    (BlockCachePolicy p) ->
                        Objects.toString(p.getMetadata().getCreationTimestamp(), ""))
                .thenComparing(p -> p.getMetadata().getName()));
  }

  /**
   * @param zone the policy's namespace in DNS: each pod view carries its DNS name there ({@link
   *     PodView#fqdn})
   */
  static Observation observe(PolicyContext c, Zone zone) {
    BlockCachePolicy policy = c.policy();
    Informers in = c.informers();
    BlockCachePolicySpec spec = policy.getSpec();
    String ns = c.namespace();
    Optional<BlockCachePolicy> owner = owner(in, policy);
    if (owner.isPresent()
        && !owner.get().getMetadata().getName().equals(policy.getMetadata().getName())) {
      return new Unobservable(
          Why.Conflict,
          "StatefulSet "
              + spec.getTargetRef().getName()
              + " is managed by BlockCachePolicy "
              + owner.get().getMetadata().getName()
              + " (created first); this policy changes nothing while that one exists");
    }
    Optional<StatefulSet> target = c.target();
    if (target.isEmpty()) {
      RecreateStatus saved = policy.getStatus() == null ? null : policy.getStatus().getRecreate();
      if (saved != null) {
        String untrusted = StorageManager.untrusted(policy, saved);
        if (untrusted != null) {
          return new Unobservable(Why.UntrustedBackup, untrusted);
        }
        return new Unobservable(
            Why.RecreateInterrupted,
            "StatefulSet "
                + spec.getTargetRef().getName()
                + " was deleted for a recreate: creating it again",
            saved);
      }
      String legacy = StorageManager.legacyBackupName(policy);
      if (c.configMap(legacy).isPresent()) {
        return new Unobservable(
            Why.UntrustedBackup,
            "StatefulSet "
                + spec.getTargetRef().getName()
                + " not found in namespace "
                + ns
                + "; ConfigMap "
                + ns
                + "/"
                + legacy
                + " looks like a StatefulSet backup, but the operator keeps its own in the"
                + " policy's status and never creates anything from a ConfigMap: not acted on");
      }
      return new Unobservable(
          Why.TargetNotFound,
          "StatefulSet " + spec.getTargetRef().getName() + " not found in namespace " + ns);
    }
    StatefulSet sts = target.get();
    if (sts.getMetadata().getDeletionTimestamp() != null) {
      return new Unobservable(
          Why.RecreatingStatefulSet,
          "waiting for StatefulSet "
              + sts.getMetadata().getName()
              + " to be deleted (orphan: pods keep running)");
    }
    var podSpec = sts.getSpec().getTemplate().getSpec();
    Optional<Container> container = Desired.container(podSpec, spec.getTargetRef().getContainer());
    if (container.isEmpty()) {
      return new Unobservable(
          Why.ContainerNotFound,
          "StatefulSet "
              + sts.getMetadata().getName()
              + " has no container "
              + Objects.toString(spec.getTargetRef().getContainer(), "at all"));
    }
    Optional<ConfigMap> base = c.configMap(spec.getHbaseSiteConfigMap());
    if (base.isEmpty()) {
      return new Unobservable(
          Why.BaseConfigNotFound,
          "ConfigMap "
              + spec.getHbaseSiteConfigMap()
              + " (spec.hbaseSiteConfigMap) not found in namespace "
              + ns);
    }
    Optional<String> configVolume =
        configVolume(
            podSpec,
            spec.getHbaseSiteConfigMap(),
            Desired.regionServerConfigMapName(policy),
            name -> c.configMap(name).orElse(null));
    if (configVolume.isEmpty()) {
      return new Unobservable(
          Why.ConfigVolumeNotFound,
          "no volume of StatefulSet "
              + sts.getMetadata().getName()
              + " mounts ConfigMap "
              + spec.getHbaseSiteConfigMap()
              + ": the operator repoints that volume to the derived ConfigMap");
    }
    List<Pod> pods = c.informers().podsOf(c.policy(), sts);
    return new Observed(
        policy,
        sts,
        base.get(),
        container.get(),
        configVolume.get(),
        podViews(pods, sts, zone, container.get().getName()),
        cacheMapRemovals(pods, sts, container.get().getName()),
        leaving(pods, sts, zone, container.get().getName()),
        RevisionFiles.keysInUse(sts, pods, Desired.regionServerConfigMapName(policy)));
  }

  /**
   * The volume of {@code spec} that holds hbase-site.xml: one mounting the base ConfigMap or the
   * policy's own derived one (not created yet, or derived from the same base), else one the
   * operator derived from the same base for a policy deleted before this one was created (its
   * StatefulSet stays on what it derived). {@code configMaps} reads a ConfigMap of the namespace:
   * the base and the policy's derived one from its watches, any other only when neither is mounted
   * (one read each, not cached).
   */
  static Optional<String> configVolume(
      PodSpec spec, String baseName, String derivedName, Function<String, ConfigMap> configMaps) {
    // the policy's own derived ConfigMap counts only while it was derived from this base: a policy
    // author who points hbaseSiteConfigMap at another ConfigMap of theirs does not get its files
    // into RegionServers that mount the derived one (switching the base takes an edit of the
    // StatefulSet's config volume, by someone who may edit it)
    Optional<String> own =
        Desired.configVolume(
            spec,
            name -> {
              if (name.equals(baseName)) {
                return true;
              }
              if (!name.equals(derivedName)) {
                return false;
              }
              ConfigMap cm = configMaps.apply(name);
              return cm == null || legacyDerived(cm) || Desired.derivedFrom(cm, baseName);
            });
    if (own.isPresent()) {
      return own;
    }
    return Desired.configVolume(
        spec,
        name -> !name.equals(derivedName) && Desired.derivedFrom(configMaps.apply(name), baseName));
  }

  /**
   * A derived ConfigMap of an operator from before the base annotation: the next apply annotates
   * it, and the check above holds from then on.
   */
  private static boolean legacyDerived(ConfigMap cm) {
    var m = cm.getMetadata();
    return m.getLabels() != null
        && Desired.FIELD_MANAGER.equals(m.getLabels().get(Desired.MANAGED_BY))
        && (m.getAnnotations() == null || !m.getAnnotations().containsKey(Desired.BASE_ANNOTATION));
  }

  /** The cache-map-guard reports of the StatefulSet's pods ({@link CacheMapReports}). */
  static List<CacheMapRemoval> cacheMapRemovals(
      List<Pod> pods, StatefulSet sts, String regionServer) {
    List<CacheMapRemoval> out = new ArrayList<>();
    for (Pod p :
        pods.stream()
            .filter(p -> Informers.ordinal(p, sts.getMetadata().getName()) >= 0)
            .toList()) {
      out.addAll(CacheMapReports.of(p, regionServer));
    }
    out.sort(Comparator.comparing(CacheMapRemoval::pod));
    return out;
  }

  /** The StatefulSet's pods below its replicas, as the roller sees them, by ordinal. */
  static List<PodView> podViews(List<Pod> pods, StatefulSet sts, Zone zone, String regionServer) {
    return podViews(pods, sts, zone, regionServer, false);
  }

  /**
   * The target's pods, below and above its replicas, when it exists; none otherwise. For a deleted
   * policy, whose HBase is given back only when it is shown to be the policy's ({@link
   * dev.hbase.cache.operator.roll.OwnCluster}).
   */
  static List<PodView> targetPods(PolicyContext c, Zone zone) {
    Optional<StatefulSet> sts = c.target();
    if (sts.isEmpty()) {
      return List.of();
    }
    String container = c.policy().getSpec().getTargetRef().getContainer();
    List<Pod> pods = c.informers().podsOf(c.policy(), sts.get());
    List<PodView> all = new ArrayList<>(podViews(pods, sts.get(), zone, container));
    all.addAll(leaving(pods, sts.get(), zone, container));
    return all;
  }

  /**
   * The StatefulSet's pods at or above its replicas (a scale-down removes them, highest first), by
   * ordinal: their regions go to the others before they stop, and no region is drained to them.
   */
  static List<PodView> leaving(List<Pod> pods, StatefulSet sts, Zone zone, String regionServer) {
    return podViews(pods, sts, zone, regionServer, true);
  }

  private static List<PodView> podViews(
      List<Pod> pods, StatefulSet sts, Zone zone, String regionServer, boolean aboveReplicas) {
    String name = sts.getMetadata().getName();
    int replicas = Observation.replicas(sts);
    List<PodView> out = new ArrayList<>();
    for (Pod p : pods) {
      int ordinal = Informers.ordinal(p, name);
      if (ordinal >= 0 && (ordinal < replicas) != aboveReplicas) {
        out.add(
            podView(
                p,
                ordinal,
                missingClaimVolumes(sts, p, ordinal),
                templateChanged(sts, p),
                regionServer,
                zone.podName(p.getMetadata().getName(), sts.getSpec().getServiceName())));
      }
    }
    out.sort(Comparator.comparingInt(PodView::ordinal));
    return out;
  }

  /**
   * The StatefulSet controller's storageMatches: every volumeClaimTemplate has a pod volume of its
   * name on the claim {@code <template>-<statefulset>-<ordinal>}. A pod created before the cache
   * template was added fails it (see {@link PodView#missingClaimVolumes()}).
   */
  static boolean missingClaimVolumes(StatefulSet sts, Pod p, int ordinal) {
    var templates = sts.getSpec().getVolumeClaimTemplates();
    if (templates == null || templates.isEmpty()) {
      return false;
    }
    List<Volume> volumes =
        p.getSpec() == null || p.getSpec().getVolumes() == null
            ? List.of()
            : p.getSpec().getVolumes();
    for (var t : templates) {
      String claim = t.getMetadata().getName() + "-" + sts.getMetadata().getName() + "-" + ordinal;
      boolean found =
          volumes.stream()
              .anyMatch(
                  v ->
                      t.getMetadata().getName().equals(v.getName())
                          && v.getPersistentVolumeClaim() != null
                          && claim.equals(v.getPersistentVolumeClaim().getClaimName()));
      if (!found) {
        return true;
      }
    }
    return false;
  }

  /**
   * The StatefulSet controller labels each pod with the template revision it was created from; a
   * pod whose label differs from the StatefulSet's current update revision runs an older template
   * (another manager changed it). Unknown while the controller has not seen the StatefulSet's
   * latest generation.
   */
  static final String CONTROLLER_REVISION_LABEL = "controller-revision-hash";

  static boolean templateChanged(StatefulSet sts, Pod p) {
    var st = sts.getStatus();
    String podRevision =
        p.getMetadata().getLabels() == null
            ? null
            : p.getMetadata().getLabels().get(CONTROLLER_REVISION_LABEL);
    return st != null
        && st.getUpdateRevision() != null
        && podRevision != null
        && Objects.equals(st.getObservedGeneration(), sts.getMetadata().getGeneration())
        && !podRevision.equals(st.getUpdateRevision());
  }

  static PodView podView(Pod p, int ordinal) {
    return podView(p, ordinal, false, false);
  }

  static PodView podView(Pod p, int ordinal, boolean missingClaimVolumes, boolean templateChanged) {
    return podView(p, ordinal, missingClaimVolumes, templateChanged, null);
  }

  static PodView podView(
      Pod p,
      int ordinal,
      boolean missingClaimVolumes,
      boolean templateChanged,
      String regionServer) {
    return podView(p, ordinal, missingClaimVolumes, templateChanged, regionServer, null);
  }

  /**
   * The pod as the roller sees it; {@code regionServer} names the RegionServer container (only its
   * restarts count for {@link PodView#restartedInPlaceAt()}; null: any container's); {@code fqdn}
   * its DNS name in the policy's namespace ({@link Zone#podName}; null: unknown).
   */
  static PodView podView(
      Pod p,
      int ordinal,
      boolean missingClaimVolumes,
      boolean templateChanged,
      String regionServer,
      String fqdn) {
    var meta = p.getMetadata();
    String revision =
        meta.getAnnotations() == null ? null : meta.getAnnotations().get(Desired.HASH_ANNOTATION);
    var st = p.getStatus();
    String stuck = null;
    if (st != null && st.getContainerStatuses() != null) {
      stuck =
          st.getContainerStatuses().stream()
              .map(
                  c ->
                      c.getState() == null || c.getState().getWaiting() == null
                          ? null
                          : c.getState().getWaiting().getReason())
              .filter(Objects::nonNull)
              .filter(STUCK_REASONS::contains)
              .findFirst()
              .orElse(null);
    }
    if (stuck == null
        && st != null
        && st.getConditions() != null
        && st.getConditions().stream()
            .anyMatch(
                c ->
                    "PodScheduled".equals(c.getType())
                        && "False".equals(c.getStatus())
                        && "Unschedulable".equals(c.getReason()))) {
      stuck = "Unschedulable";
    }
    return new PodView(
        meta.getName(),
        meta.getUid(),
        ordinal,
        revision,
        Readiness.isPodReady(p),
        meta.getDeletionTimestamp() != null,
        stuck,
        st == null ? null : st.getPodIP(),
        missingClaimVolumes,
        templateChanged,
        meta.getDeletionTimestamp() == null ? null : stopCause(p),
        ContainerRestarts.restartedInPlaceAt(p, regionServer),
        fqdn,
        ContainerRestarts.lastTermination(p, regionServer));
  }

  /**
   * Why a terminating pod stops: the reason of its {@code DisruptionTarget} condition (set by the
   * Eviction API, the scheduler's preemption, the taint manager, the node's graceful shutdown...),
   * else {@code Deleted} (a plain delete: kubectl, a StatefulSet scale-down, a Helm upgrade).
   */
  static String stopCause(Pod p) {
    var st = p.getStatus();
    if (st != null && st.getConditions() != null) {
      for (var c : st.getConditions()) {
        if ("DisruptionTarget".equals(c.getType())
            && "True".equals(c.getStatus())
            && c.getReason() != null) {
          return c.getReason();
        }
      }
    }
    return "Deleted";
  }
}
