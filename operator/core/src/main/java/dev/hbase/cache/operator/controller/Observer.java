package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import dev.hbase.cache.operator.controller.Observation.CacheMapRemoval;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.controller.Observation.Unobservable;
import dev.hbase.cache.operator.controller.Observation.Why;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.readiness.Readiness;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The observe step: the policy's StatefulSet, base ConfigMap and pods from the informer caches,
 * checked for what planning needs. Reads only; no API call.
 *
 * <p>Over ~400 lines (about 420) because it is the one place that turns Kubernetes objects into the
 * roller's pure views: {@link #observe} and the pod views ({@link #podViews}, {@link #leaving},
 * {@link #podView}: readiness, revision, claims, why a pod stopped) read the same objects, and
 * splitting them would put the pod's reading in two places.
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

  /** The policy's target StatefulSet as the informer shows it, if it exists. */
  static Optional<StatefulSet> target(Informers in, BlockCachePolicy policy) {
    return in.statefulSets()
        .get(
            new ResourceID(
                policy.getSpec().getTargetRef().getName(), policy.getMetadata().getNamespace()));
  }

  static Observation observe(PolicyContext c) {
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
    Optional<StatefulSet> target =
        in.statefulSets().get(new ResourceID(spec.getTargetRef().getName(), ns));
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
            in.configMaps(),
            ns);
    if (configVolume.isEmpty()) {
      return new Unobservable(
          Why.ConfigVolumeNotFound,
          "no volume of StatefulSet "
              + sts.getMetadata().getName()
              + " mounts ConfigMap "
              + spec.getHbaseSiteConfigMap()
              + ": the operator repoints that volume to the derived ConfigMap");
    }
    return new Observed(
        policy,
        sts,
        base.get(),
        container.get(),
        configVolume.get(),
        podViews(in.pods(), sts, ns, container.get().getName()),
        cacheMapRemovals(in.pods(), sts, ns),
        leaving(in.pods(), sts, ns, container.get().getName()));
  }

  /**
   * The volume of {@code spec} that holds hbase-site.xml: one mounting the base ConfigMap, or one
   * the operator derived from the same base (for this policy or for one deleted before it was
   * created, whose StatefulSet stays on what it derived), or the policy's own derived name not
   * created yet.
   */
  static Optional<String> configVolume(
      PodSpec spec,
      String baseName,
      String derivedName,
      InformerEventSource<ConfigMap, BlockCachePolicy> configMaps,
      String ns) {
    // the policy's own derived ConfigMap counts only while it was derived from this base: a policy
    // author who points hbaseSiteConfigMap at another ConfigMap of theirs does not get its files
    // into RegionServers that mount the derived one (switching the base takes an edit of the
    // StatefulSet's config volume, by someone who may edit it)
    return Desired.configVolume(
        spec,
        name -> {
          if (name.equals(baseName)) {
            return true;
          }
          ConfigMap cm = configMaps.get(new ResourceID(name, ns)).orElse(null);
          return name.equals(derivedName) && (cm == null || legacyDerived(cm))
              || Desired.derivedFrom(cm, baseName);
        });
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

  /** The cache-map-guard reports of the StatefulSet's pods (their current start). */
  static List<CacheMapRemoval> cacheMapRemovals(
      InformerEventSource<Pod, BlockCachePolicy> pods, StatefulSet sts, String ns) {
    List<CacheMapRemoval> out = new ArrayList<>();
    for (Pod p :
        pods.list(ns, p -> Informers.ordinal(p, sts.getMetadata().getName()) >= 0).toList()) {
      if (p.getStatus() == null || p.getStatus().getInitContainerStatuses() == null) {
        continue;
      }
      for (var c : p.getStatus().getInitContainerStatuses()) {
        if (!Desired.CACHE_MAP_GUARD.equals(c.getName())) {
          continue;
        }
        // the current run only: reporting lastState too would alternate two messages per pod
        var t = c.getState() == null ? null : c.getState().getTerminated();
        if (t != null && t.getMessage() != null && !t.getMessage().isBlank()) {
          out.add(
              new CacheMapRemoval(
                  p.getMetadata().getName(), t.getFinishedAt(), t.getMessage().strip()));
        }
      }
    }
    out.sort(Comparator.comparing(CacheMapRemoval::pod));
    return out;
  }

  /** The StatefulSet's pods below its replicas, as the roller sees them, by ordinal. */
  static List<PodView> podViews(
      InformerEventSource<Pod, BlockCachePolicy> pods,
      StatefulSet sts,
      String ns,
      String regionServer) {
    return podViews(pods, sts, ns, regionServer, false);
  }

  /**
   * The StatefulSet's pods at or above its replicas (a scale-down removes them, highest first), by
   * ordinal: their regions go to the others before they stop, and no region is drained to them.
   */
  static List<PodView> leaving(
      InformerEventSource<Pod, BlockCachePolicy> pods,
      StatefulSet sts,
      String ns,
      String regionServer) {
    return podViews(pods, sts, ns, regionServer, true);
  }

  private static List<PodView> podViews(
      InformerEventSource<Pod, BlockCachePolicy> pods,
      StatefulSet sts,
      String ns,
      String regionServer,
      boolean aboveReplicas) {
    String name = sts.getMetadata().getName();
    int replicas = Observation.replicas(sts);
    List<PodView> out = new ArrayList<>();
    for (Pod p : pods.list(ns, p -> true).toList()) {
      int ordinal = Informers.ordinal(p, name);
      if (ordinal >= 0 && (ordinal < replicas) != aboveReplicas) {
        out.add(
            podView(
                p,
                ordinal,
                missingClaimVolumes(sts, p, ordinal),
                templateChanged(sts, p),
                regionServer));
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

  /**
   * The pod as the roller sees it; {@code regionServer} names the RegionServer container (only its
   * restarts count for {@link PodView#restartedInPlaceAt()}; null: any container's).
   */
  static PodView podView(
      Pod p,
      int ordinal,
      boolean missingClaimVolumes,
      boolean templateChanged,
      String regionServer) {
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
