package dev.hbase.cache.operator.controller;

import static dev.hbase.cache.operator.controller.Conditions.CACHE_RESET_PENDING;
import static dev.hbase.cache.operator.controller.Conditions.DEGRADED;
import static dev.hbase.cache.operator.controller.Conditions.PROGRESSING;
import static dev.hbase.cache.operator.controller.Conditions.READY;
import static dev.hbase.cache.operator.controller.Conditions.VALID;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.spec.WarmGate;
import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Planner;
import dev.hbase.cache.operator.plan.Refusal;
import dev.hbase.cache.operator.plan.Sizes;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.CacheView;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Roller;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a BlockCachePolicy: observe (StatefulSet, base ConfigMap, pods, HBase) -> plan -> apply
 * (derived ConfigMap, StatefulSet fields by server-side apply, cache volume) -> roll (one {@link
 * Roller} step) -> status. An invalid plan touches nothing.
 */
@ControllerConfiguration(name = BlockCachePolicyReconciler.NAME)
public class BlockCachePolicyReconciler implements Reconciler<BlockCachePolicy>, Cleaner<BlockCachePolicy> {
  public static final String NAME = "blockcachepolicy";
  private static final Logger log = LoggerFactory.getLogger(BlockCachePolicyReconciler.class);
  private static final Set<String> STUCK_REASONS =
      Set.of("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError");

  private final Clock clock;
  private final HBaseConnector connector;
  private final Events events;
  private final StorageManager storage;
  private final Map<String, HBaseCluster> clusters = new ConcurrentHashMap<>();
  private final MetricsCollector metrics;

  private InformerEventSource<StatefulSet, BlockCachePolicy> statefulSets;
  private InformerEventSource<ConfigMap, BlockCachePolicy> configMaps;
  private InformerEventSource<Pod, BlockCachePolicy> pods;

  public BlockCachePolicyReconciler(Clock clock, HBaseConnector connector, CacheProbe probe) {
    this.clock = clock;
    this.connector = connector;
    this.events = new Events(clock);
    this.storage = new StorageManager();
    this.metrics = new MetricsCollector(probe);
  }

  // ------------------------------------------------------------------ watches

  @Override
  public List<EventSource<?, BlockCachePolicy>> prepareEventSources(EventSourceContext<BlockCachePolicy> ctx) {
    statefulSets =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(StatefulSet.class, BlockCachePolicy.class)
                .withName("statefulsets")
                .withSecondaryToPrimaryMapper(sts -> policies(ctx, sts, p -> p.getSpec().getTargetRef().getName().equals(sts.getMetadata().getName())))
                .withPrimaryToSecondaryMapper(
                    (BlockCachePolicy p) -> Set.of(new ResourceID(p.getSpec().getTargetRef().getName(), p.getMetadata().getNamespace())))
                .build(),
            ctx);
    configMaps =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ConfigMap.class, BlockCachePolicy.class)
                .withName("configmaps")
                .withSecondaryToPrimaryMapper(
                    cm ->
                        policies(
                            ctx,
                            cm,
                            p ->
                                cm.getMetadata().getName().equals(p.getSpec().getHbaseSiteConfigMap())
                                    || cm.getMetadata().getName().equals(Desired.regionServerConfigMapName(p))
                                    || cm.getMetadata().getName().equals(Desired.masterConfigMapName(p))
                                    || cm.getMetadata().getName().equals(StorageManager.backupName(p))))
                .withPrimaryToSecondaryMapper(
                    (BlockCachePolicy p) ->
                        Set.of(
                            new ResourceID(p.getSpec().getHbaseSiteConfigMap(), p.getMetadata().getNamespace()),
                            new ResourceID(Desired.regionServerConfigMapName(p), p.getMetadata().getNamespace())))
                .build(),
            ctx);
    pods =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Pod.class, BlockCachePolicy.class)
                .withName("pods")
                .withSecondaryToPrimaryMapper(
                    pod -> policies(ctx, pod, p -> ordinal(pod, p.getSpec().getTargetRef().getName()) >= 0))
                .withPrimaryToSecondaryMapper((BlockCachePolicy p) -> Set.of())
                .build(),
            ctx);
    return List.of(statefulSets, configMaps, pods);
  }

  private static Set<ResourceID> policies(
      EventSourceContext<BlockCachePolicy> ctx, HasMetadata r, java.util.function.Predicate<BlockCachePolicy> match) {
    String ns = r.getMetadata().getNamespace();
    return ctx.getPrimaryCache()
        .list(ns)
        .filter(p -> p.getSpec() != null && p.getSpec().getTargetRef() != null && p.getSpec().getTargetRef().getName() != null)
        .filter(match)
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  // ------------------------------------------------------------------ reconcile

  @Override
  public UpdateControl<BlockCachePolicy> reconcile(BlockCachePolicy policy, Context<BlockCachePolicy> ctx) {
    Instant now = clock.instant();
    KubernetesClient client = ctx.getClient();
    BlockCachePolicyStatus old = policy.getStatus();
    BlockCachePolicyStatus status = old == null ? new BlockCachePolicyStatus() : Serialization.clone(old);
    status.setObservedGeneration(policy.getMetadata().getGeneration());
    String ns = policy.getMetadata().getNamespace();
    BlockCachePolicySpec spec = policy.getSpec();
    Duration requeue = metricsInterval(spec);

    // --- observe ---
    Optional<StatefulSet> target = statefulSets.get(new ResourceID(spec.getTargetRef().getName(), ns));
    Optional<ConfigMap> base = configMaps.get(new ResourceID(spec.getHbaseSiteConfigMap(), ns));
    if (target.isEmpty()) {
      Optional<ConfigMap> backup = configMaps.get(new ResourceID(StorageManager.backupName(policy), ns));
      if (backup.isPresent()) {
        // Between the orphan delete and the create of a StatefulSet recreate: finish it.
        storage.finishRecreate(client, policy, backup.get());
        return done(ctx, policy, old, status, Duration.ofSeconds(2));
      }
      return invalid(ctx, policy, old, status, "TargetNotFound",
          "StatefulSet " + spec.getTargetRef().getName() + " not found in namespace " + ns, now);
    }
    StatefulSet sts = target.get();
    if (sts.getMetadata().getDeletionTimestamp() != null) {
      Conditions.set(status.getConditions(), PROGRESSING, true, "RecreatingStatefulSet",
          "waiting for StatefulSet " + sts.getMetadata().getName() + " to be deleted (orphan: pods keep running)",
          policy.getMetadata().getGeneration(), now);
      return done(ctx, policy, old, status, Duration.ofSeconds(2));
    }
    var podSpec = sts.getSpec().getTemplate().getSpec();
    Optional<Container> container = Desired.container(podSpec, spec.getTargetRef().getContainer());
    if (container.isEmpty()) {
      return invalid(ctx, policy, old, status, "ContainerNotFound",
          "StatefulSet " + sts.getMetadata().getName() + " has no container "
              + Objects.toString(spec.getTargetRef().getContainer(), "at all"), now);
    }
    if (base.isEmpty()) {
      return invalid(ctx, policy, old, status, "BaseConfigNotFound",
          "ConfigMap " + spec.getHbaseSiteConfigMap() + " (spec.hbaseSiteConfigMap) not found in namespace " + ns, now);
    }
    Optional<String> configVolume =
        Desired.configVolume(podSpec, spec.getHbaseSiteConfigMap(), Desired.regionServerConfigMapName(policy));
    if (configVolume.isEmpty()) {
      return invalid(ctx, policy, old, status, "ConfigVolumeNotFound",
          "no volume of StatefulSet " + sts.getMetadata().getName() + " mounts ConfigMap " + spec.getHbaseSiteConfigMap()
              + ": the operator repoints that volume to the derived ConfigMap", now);
    }

    // --- plan ---
    Long limit = bytes(container.get(), "limits");
    Long request = bytes(container.get(), "requests");
    PlanResult result = Planner.plan(spec, limit, request);
    if (result instanceof Refusal r) {
      return invalid(ctx, policy, old, status, "PlanRefused", r.summary(), now);
    }
    Plan plan = (Plan) result;
    Map<String, String> data;
    try {
      data = Desired.siteData(base.get().getData(), plan.regionServerSite(), plan.regionServerSiteRemoved(),
          "hbase-site.xml of " + spec.getHbaseSiteConfigMap() + " with the cache settings of BlockCachePolicy "
              + policy.getMetadata().getName() + " (managed by hbase-cache-operator, edits are overwritten)");
    } catch (IllegalArgumentException e) {
      return invalid(ctx, policy, old, status, "BaseConfigInvalid", e.getMessage(), now);
    }
    String revision = Desired.revision(plan, data, annotation(policy, BlockCachePolicy.RESTART_ANNOTATION));
    Conditions.set(status.getConditions(), VALID, true, "Planned",
        plan.mode() + ": heap " + Sizes.quantity(plan.heap()) + ", direct " + Sizes.quantity(plan.directMemory())
            + (plan.bucketCache() > 0 ? ", L2 " + Sizes.quantity(plan.bucketCache()) : ""),
        policy.getMetadata().getGeneration(), now);

    // A new plan that throws away persisted caches: say so before the first pod restarts.
    if (status.getPlan() != null && !plan.configHash().equals(status.getPlan().getConfigHash())) {
      List<String> resets = Planner.cacheResetReasons(status.getPlan().getRegionServerSite(), plan);
      if (!resets.isEmpty()) {
        String msg = "the next restarts drop the persisted caches: " + String.join("; ", resets);
        Conditions.set(status.getConditions(), CACHE_RESET_PENDING, true, "CacheLayoutChanged", msg,
            policy.getMetadata().getGeneration(), now);
        events.warn(client, policy, "CacheResetPending", msg);
      }
    }
    status.setPlan(plan.toStatus());

    // --- apply ---
    apply(client, Desired.configMap(policy, Desired.regionServerConfigMapName(policy), data));
    if (plan.pvcSize() > 0) {
      StorageManager.Outcome o = storage.ensureClaimTemplate(client, policy, sts, plan, events);
      if (o.blocked() != null) {
        Conditions.set(status.getConditions(), DEGRADED, true, "StorageBlocked", o.blocked(), policy.getMetadata().getGeneration(), now);
        Conditions.set(status.getConditions(), READY, false, "StorageBlocked", o.blocked(), policy.getMetadata().getGeneration(), now);
        status.setRollout(Optional.ofNullable(status.getRollout()).orElseGet(RolloutStatus::new)
            .setPhase(RolloutStatus.Phase.Blocked).setMessage(o.blocked()));
        return done(ctx, policy, old, status, Duration.ofSeconds(60));
      }
      if (o.recreating()) {
        Conditions.set(status.getConditions(), PROGRESSING, true, "RecreatingStatefulSet", o.message(),
            policy.getMetadata().getGeneration(), now);
        return done(ctx, policy, old, status, Duration.ofSeconds(2));
      }
    }
    ensureOnDelete(client, sts);
    apply(client, Desired.regionServerPatch(policy, plan, revision, container.get().getName(), configVolume.get()));
    if (spec.getMasterRef() != null) {
      applyMaster(client, policy, base.get(), plan);
    }

    // --- roll ---
    List<PodView> podViews = podViews(sts, ns);
    RolloutStatus rollout = status.getRollout();
    boolean rolling =
        podViews.stream().anyMatch(p -> !revision.equals(p.revision()))
            || (rollout != null && ((rollout.getInFlight() != null && !rollout.getInFlight().isEmpty()) || rollout.getBalancerWasOn() != null));
    ClusterSnapshot view = rolling ? snapshot(spec, base.get(), now) : ClusterSnapshot.unreachable(now, "not asked: nothing to roll");
    Map<String, CacheView> caches = rolling ? metrics.probeNow(policy, podViews) : Map.of();
    Roller.Decision d = Roller.step(rollout, new RollModel.Input(settings(spec, plan, revision), podViews, view, caches, now, replicas(sts)));
    for (RollModel.Action a : d.actions()) {
      if (!execute(client, policy, spec, base.get(), ns, a)) {
        d = null;
        break;
      }
    }
    if (d == null) {
      // An action failed: keep the old state so the step is retried; the roller is idempotent.
      return done(ctx, policy, old, status, Duration.ofSeconds(5));
    }
    d.events().forEach(e -> events.record(client, policy, e.warning(), e.reason(), e.message()));
    status.setRollout(d.state());
    recordRestarts(status, d.restarted());
    requeue = min(requeue, d.requeueAfter());
    conditionsFromRoll(status, d, policy.getMetadata().getGeneration(), now);

    // --- hit ratios ---
    metrics.update(policy, status, podViews, now);
    return done(ctx, policy, old, status, requeue);
  }

  @Override
  public DeleteControl cleanup(BlockCachePolicy policy, Context<BlockCachePolicy> ctx) {
    // Nothing Kubernetes-side is deleted: the StatefulSet, its pods, PVCs and the derived
    // ConfigMap stay. HBase is left as a roll would leave it: balancer restored, marks cleared.
    RolloutStatus r = policy.getStatus() == null ? null : policy.getStatus().getRollout();
    if (r != null && (Boolean.TRUE.equals(r.getBalancerWasOn()) || (r.getInFlight() != null && !r.getInFlight().isEmpty()))) {
      String ns = policy.getMetadata().getNamespace();
      ConfigMap base = configMaps.get(new ResourceID(policy.getSpec().getHbaseSiteConfigMap(), ns)).orElse(null);
      // Each step on its own: the balancer matters most. A mark that cannot be cleared belongs
      // to an instance that is gone (its pod restarts under a new start code, unmarked).
      if (Boolean.TRUE.equals(r.getBalancerWasOn())) {
        bestEffort(policy, "switch the balancer back on", () -> cluster(policy.getSpec(), base).balancer(true));
      }
      for (var f : r.getInFlight()) {
        if (f.getOldServer() != null) {
          bestEffort(policy, "clear the decommission mark of " + f.getOldServer(),
              () -> cluster(policy.getSpec(), base).recommission(ServerId.parse(f.getOldServer()), List.of()));
        }
      }
    }
    metrics.forget(policy);
    return DeleteControl.defaultDelete();
  }

  // ------------------------------------------------------------------ pieces

  private interface HBaseCall {
    Object call() throws Exception;
  }

  private static void bestEffort(BlockCachePolicy policy, String what, HBaseCall call) {
    try {
      call.call();
    } catch (Exception e) {
      log.warn("policy {} deleted mid-roll: could not {}: {}", policy.getMetadata().getName(), what, e.toString());
    }
  }

  private UpdateControl<BlockCachePolicy> invalid(
      Context<BlockCachePolicy> ctx, BlockCachePolicy policy, BlockCachePolicyStatus old, BlockCachePolicyStatus status,
      String reason, String message, Instant now) {
    Long gen = policy.getMetadata().getGeneration();
    Conditions.set(status.getConditions(), VALID, false, reason, message, gen, now);
    Conditions.set(status.getConditions(), READY, false, reason, "the policy is not applied: " + message, gen, now);
    events.warn(ctx.getClient(), policy, reason, message);
    return done(ctx, policy, old, status, Duration.ofSeconds(60));
  }

  /**
   * Writes the status when it changed. The roll's state lives in the status, so the next reconcile
   * must see this write even when an event (a pod turning Ready) triggers it before the informer
   * has caught up: otherwise it re-decides a step already taken (seen: a second PodRestarted event
   * for one restart, a balancer switched off and on again after a roll). JOSDK's
   * PrimaryUpdateAndCacheUtils patches with optimistic locking (a conflict re-reads and re-applies)
   * and keeps the written resource in a cache over the informer until the informer has it.
   */
  private UpdateControl<BlockCachePolicy> done(
      Context<BlockCachePolicy> ctx, BlockCachePolicy policy, BlockCachePolicyStatus old, BlockCachePolicyStatus status,
      Duration requeue) {
    if (!Objects.equals(old, status)) {
      BlockCachePolicy fresh = new BlockCachePolicy();
      fresh.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
          .withName(policy.getMetadata().getName())
          .withNamespace(policy.getMetadata().getNamespace())
          .build());
      fresh.setStatus(status);
      PrimaryUpdateAndCacheUtils.ssaPatchStatusAndCacheResource(policy, fresh, ctx);
    }
    return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(requeue);
  }

  /**
   * The API server defaults updateStrategy.rollingUpdate on every StatefulSet, owned by whoever
   * created it; server-side apply cannot set type OnDelete while that field stays. Replace the
   * strategy once with a JSON merge patch (type OnDelete, rollingUpdate removed): idempotent, so no
   * optimistic lock is needed, and it needs only the {@code patch} verb the chart's RBAC grants
   * (an update/PUT is forbidden there).
   */
  private static void ensureOnDelete(KubernetesClient client, StatefulSet sts) {
    var strategy = sts.getSpec().getUpdateStrategy();
    if (strategy != null && "OnDelete".equals(strategy.getType()) && strategy.getRollingUpdate() == null) {
      return;
    }
    client.apps().statefulSets().inNamespace(sts.getMetadata().getNamespace()).withName(sts.getMetadata().getName())
        .patch(io.fabric8.kubernetes.client.dsl.base.PatchContext.of(io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            "{\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":null}}}");
  }

  private static void apply(KubernetesClient client, HasMetadata desired) {
    client.resource(desired).fieldManager(Desired.FIELD_MANAGER).forceConflicts().serverSideApply();
  }

  private void applyMaster(KubernetesClient client, BlockCachePolicy policy, ConfigMap base, Plan plan) {
    var ref = policy.getSpec().getMasterRef();
    String ns = policy.getMetadata().getNamespace();
    Map<String, String> data = Desired.siteData(base.getData(), plan.masterSite(), Set.of(),
        "hbase-site.xml of " + base.getMetadata().getName() + " with the master keys of BlockCachePolicy " + policy.getMetadata().getName());
    apply(client, Desired.configMap(policy, Desired.masterConfigMapName(policy), data));
    boolean deployment = ref.getKind() == dev.hbase.cache.api.v1alpha1.spec.MasterRef.Kind.Deployment;
    HasMetadata workload = deployment
        ? client.apps().deployments().inNamespace(ns).withName(ref.getName()).get()
        : client.apps().statefulSets().inNamespace(ns).withName(ref.getName()).get();
    if (workload == null) {
      events.warn(client, policy, "MasterNotFound", (deployment ? "Deployment " : "StatefulSet ") + ref.getName() + " not found");
      return;
    }
    var podSpec = deployment
        ? ((io.fabric8.kubernetes.api.model.apps.Deployment) workload).getSpec().getTemplate().getSpec()
        : ((StatefulSet) workload).getSpec().getTemplate().getSpec();
    Optional<String> volume = Desired.configVolume(podSpec, base.getMetadata().getName(), Desired.masterConfigMapName(policy));
    if (volume.isEmpty()) {
      events.warn(client, policy, "MasterConfigVolumeNotFound",
          ref.getName() + " mounts no volume from ConfigMap " + base.getMetadata().getName() + ": master keys not applied");
      return;
    }
    var patch = Map.of(
        "apiVersion", "apps/v1", "kind", deployment ? "Deployment" : "StatefulSet",
        "metadata", Map.of("name", ref.getName(), "namespace", ns),
        "spec", Map.of("template", Map.of("spec", Map.of("volumes", List.of(Desired.masterConfigVolume(policy, volume.get()))))));
    HasMetadata p = deployment
        ? Serialization.unmarshal(Serialization.asJson(patch), io.fabric8.kubernetes.api.model.apps.Deployment.class)
        : Serialization.unmarshal(Serialization.asJson(patch), StatefulSet.class);
    apply(client, p);
  }

  private boolean execute(KubernetesClient client, BlockCachePolicy policy, BlockCachePolicySpec spec, ConfigMap base, String ns, RollModel.Action a) {
    try {
      if (a instanceof RollModel.DeletePod d) {
        // Only the instance the roll recorded: same UID, and the delete is conditional on the
        // resourceVersion just read, so a successor with the same name is never deleted.
        Pod live = client.pods().inNamespace(ns).withName(d.pod()).get();
        if (live != null && d.uid().equals(live.getMetadata().getUid()) && live.getMetadata().getDeletionTimestamp() == null) {
          client.pods().inNamespace(ns).withName(d.pod()).lockResourceVersion(live.getMetadata().getResourceVersion()).delete();
        }
      } else if (a instanceof RollModel.SwitchBalancer b) {
        cluster(spec, base).balancer(b.on());
      } else if (a instanceof RollModel.Decommission d) {
        cluster(spec, base).decommission(d.server(), true);
      } else if (a instanceof RollModel.Recommission r) {
        cluster(spec, base).recommission(r.oldServer(), r.regions());
      }
      log.info("policy {}/{}: {}", ns, policy.getMetadata().getName(), a);
      return true;
    } catch (Exception e) {
      if (a instanceof RollModel.DeletePod && e instanceof io.fabric8.kubernetes.client.KubernetesClientException k && k.getCode() == 409) {
        return false; // the pod changed since it was read: decide again with fresh state
      }
      log.warn("policy {}/{}: {} failed: {}", ns, policy.getMetadata().getName(), a, e.toString());
      events.warn(client, policy, "ActionFailed", a + " failed: " + e.getMessage());
      return false;
    }
  }

  private ClusterSnapshot snapshot(BlockCachePolicySpec spec, ConfigMap base, Instant now) {
    try {
      return cluster(spec, base).snapshot();
    } catch (RuntimeException e) {
      return ClusterSnapshot.unreachable(now, e.getMessage());
    }
  }

  private HBaseCluster cluster(BlockCachePolicySpec spec, ConfigMap base) {
    Map<String, String> site =
        base == null || base.getData() == null ? Map.of() : SiteXml.parse(base.getData().get(Desired.SITE_FILE));
    String quorum = quorum(spec, site);
    String parent = znodeParent(spec, site);
    return clusters.computeIfAbsent(quorum + parent, k -> connector.connect(quorum, parent));
  }

  static String quorum(BlockCachePolicySpec spec, Map<String, String> site) {
    if (spec.getHbase() != null && spec.getHbase().getZookeeperQuorum() != null) {
      return spec.getHbase().getZookeeperQuorum();
    }
    String q = site == null ? null : site.get("hbase.zookeeper.quorum");
    return q != null ? q : "localhost";
  }

  static String znodeParent(BlockCachePolicySpec spec, Map<String, String> site) {
    if (spec.getHbase() != null && spec.getHbase().getZookeeperZnodeParent() != null) {
      return spec.getHbase().getZookeeperZnodeParent();
    }
    String z = site == null ? null : site.get("zookeeper.znode.parent");
    return z != null ? z : "/hbase";
  }

  private List<Pod> pods(String ns) {
    return pods.list(ns, p -> true).toList();
  }

  private static int replicas(StatefulSet sts) {
    return sts.getSpec().getReplicas() == null ? 1 : sts.getSpec().getReplicas();
  }

  List<PodView> podViews(StatefulSet sts, String ns) {
    String name = sts.getMetadata().getName();
    int replicas = replicas(sts);
    List<PodView> out = new ArrayList<>();
    for (Pod p : pods(ns)) {
      int ordinal = ordinal(p, name);
      if (ordinal < 0 || ordinal >= replicas) {
        continue;
      }
      out.add(podView(p, ordinal, missingClaimVolumes(sts, p, ordinal)));
    }
    out.sort(java.util.Comparator.comparingInt(PodView::ordinal));
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
    var volumes = p.getSpec() == null || p.getSpec().getVolumes() == null ? List.<io.fabric8.kubernetes.api.model.Volume>of() : p.getSpec().getVolumes();
    for (var t : templates) {
      String claim = t.getMetadata().getName() + "-" + sts.getMetadata().getName() + "-" + ordinal;
      boolean found = volumes.stream().anyMatch(v -> t.getMetadata().getName().equals(v.getName())
          && v.getPersistentVolumeClaim() != null && claim.equals(v.getPersistentVolumeClaim().getClaimName()));
      if (!found) {
        return true;
      }
    }
    return false;
  }

  static PodView podView(Pod p, int ordinal) {
    return podView(p, ordinal, false);
  }

  static PodView podView(Pod p, int ordinal, boolean missingClaimVolumes) {
    var meta = p.getMetadata();
    String revision = meta.getAnnotations() == null ? null : meta.getAnnotations().get(Desired.HASH_ANNOTATION);
    var st = p.getStatus();
    boolean ready = st != null && st.getConditions() != null
        && st.getConditions().stream().anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    String stuck = null;
    if (st != null && st.getContainerStatuses() != null) {
      stuck = st.getContainerStatuses().stream()
          .map(c -> c.getState() == null || c.getState().getWaiting() == null ? null : c.getState().getWaiting().getReason())
          .filter(Objects::nonNull)
          .filter(STUCK_REASONS::contains).findFirst().orElse(null);
    }
    if (stuck == null && st != null && st.getConditions() != null
        && st.getConditions().stream().anyMatch(c -> "PodScheduled".equals(c.getType()) && "False".equals(c.getStatus()) && "Unschedulable".equals(c.getReason()))) {
      stuck = "Unschedulable";
    }
    return new PodView(meta.getName(), meta.getUid(), ordinal, revision, ready, meta.getDeletionTimestamp() != null, stuck,
        st == null ? null : st.getPodIP(), missingClaimVolumes);
  }

  private static final Pattern ORDINAL = Pattern.compile("^(.*)-([0-9]+)$");

  static int ordinal(Pod p, String stsName) {
    Matcher m = ORDINAL.matcher(p.getMetadata().getName());
    return m.matches() && m.group(1).equals(stsName) ? Integer.parseInt(m.group(2)) : -1;
  }

  static RollModel.Settings settings(BlockCachePolicySpec spec, Plan plan, String revision) {
    RolloutSpec r = spec.getRollout() == null ? new RolloutSpec() : spec.getRollout();
    WarmGate w = r.getWarmGate() == null ? new WarmGate() : r.getWarmGate();
    return new RollModel.Settings(
        revision,
        r.getStrategy() == null ? RolloutSpec.Strategy.DrainAndReload : r.getStrategy(),
        r.getMaxUnavailable() == null ? 1 : r.getMaxUnavailable(),
        Boolean.TRUE.equals(r.getPaused()),
        Durations.parse(r.getPodReadyTimeout(), "10m"),
        w.getMinRetainedFraction(),
        w.getMinHitRatio(),
        Durations.parse(w.getTimeout(), "5m"),
        plan.persistentPath() != null);
  }

  private static void recordRestarts(BlockCachePolicyStatus status, List<RollModel.Restarted> restarted) {
    for (RollModel.Restarted r : restarted) {
      RegionServerStatus rs = status.getRegionServers().stream().filter(x -> r.pod().equals(x.getPod())).findFirst()
          .orElseGet(() -> {
            RegionServerStatus n = new RegionServerStatus().setPod(r.pod());
            status.getRegionServers().add(n);
            return n;
          });
      rs.setRestartedAt(r.readyAt().toString());
      rs.setRetainedFraction(r.retainedFraction() == null ? null : Math.round(r.retainedFraction() * 10000) / 10000.0);
    }
    status.getRegionServers().sort(java.util.Comparator.comparing(RegionServerStatus::getPod));
  }

  private static void conditionsFromRoll(BlockCachePolicyStatus status, Roller.Decision d, Long gen, Instant now) {
    RolloutStatus r = d.state();
    boolean idle = r.getPhase() == RolloutStatus.Phase.Idle;
    Conditions.set(status.getConditions(), DEGRADED, d.degraded(), d.degraded() ? d.degradedReason() : "AsPlanned",
        d.degraded() ? d.degradedMessage() : "", gen, now);
    Conditions.set(status.getConditions(), PROGRESSING, r.getPhase() == RolloutStatus.Phase.Rolling,
        switch (r.getPhase()) {
          case Idle -> "UpToDate";
          case Paused -> "Paused";
          case Blocked -> "Blocked";
          case Rolling -> d.progressReason() != null ? d.progressReason() : "Rolling";
        },
        r.getPhase() == RolloutStatus.Phase.Rolling
            ? r.getProgress() + " RegionServers updated" + (d.progressMessage() != null ? "; " + d.progressMessage() : "")
            : Objects.toString(r.getMessage(), ""),
        gen, now);
    Conditions.set(status.getConditions(), READY, idle, idle ? "Applied" : "RollPending",
        idle ? "all RegionServers run the planned cache" : r.getProgress() + " RegionServers updated", gen, now);
    if (idle && Conditions.isTrue(status.getConditions(), CACHE_RESET_PENDING)) {
      Conditions.set(status.getConditions(), CACHE_RESET_PENDING, false, "RollFinished",
          "the new cache layout is in place", gen, now);
    }
  }

  private static Long bytes(Container c, String which) {
    var res = c.getResources();
    if (res == null) {
      return null;
    }
    Map<String, Quantity> m = "limits".equals(which) ? res.getLimits() : res.getRequests();
    return m == null ? null : Sizes.bytes(m.get("memory"));
  }

  private static String annotation(HasMetadata r, String key) {
    return r.getMetadata().getAnnotations() == null ? null : r.getMetadata().getAnnotations().get(key);
  }

  static Duration metricsInterval(BlockCachePolicySpec spec) {
    return Durations.parse(spec.getMetrics() == null ? null : spec.getMetrics().getInterval(), "30s");
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Closes the HBase connections (operator shutdown). */
  public void close() {
    clusters.values().forEach(HBaseCluster::close);
    clusters.clear();
  }
}
