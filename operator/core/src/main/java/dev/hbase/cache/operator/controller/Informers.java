package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What the operator watches besides the policies, and which policy each change concerns: the
 * reconciler's event sources, built once from JOSDK's EventSourceContext, and the policies' own
 * cache. The steps read them through a PolicyContext.
 */
record Informers(
    InformerEventSource<StatefulSet, BlockCachePolicy> statefulSets,
    InformerEventSource<ConfigMap, BlockCachePolicy> configMaps,
    InformerEventSource<Pod, BlockCachePolicy> pods,
    InformerEventSource<PodDisruptionBudget, BlockCachePolicy> budgets,
    IndexerResourceCache<BlockCachePolicy> policies) {

  /**
   * The StatefulSet controller labels every pod it creates with its name: the pods informer watches
   * only those, not every pod of the namespace.
   */
  static final String STATEFULSET_POD_LABEL = "statefulset.kubernetes.io/pod-name";

  private static final Pattern ORDINAL = Pattern.compile("^(.*)-([0-9]+)$");

  /** The pod's ordinal in StatefulSet {@code stsName}, or -1 when it is not one of its pods. */
  static int ordinal(Pod p, String stsName) {
    Matcher m = ORDINAL.matcher(p.getMetadata().getName());
    return m.matches() && m.group(1).equals(stsName) ? Integer.parseInt(m.group(2)) : -1;
  }

  List<EventSource<?, BlockCachePolicy>> eventSources() {
    return List.of(statefulSets, configMaps, pods, budgets);
  }

  static Informers of(EventSourceContext<BlockCachePolicy> ctx) {
    var statefulSets =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(StatefulSet.class, BlockCachePolicy.class)
                .withName("statefulsets")
                .withSecondaryToPrimaryMapper(
                    sts ->
                        policies(
                            ctx,
                            sts,
                            p ->
                                p.getSpec()
                                    .getTargetRef()
                                    .getName()
                                    .equals(sts.getMetadata().getName())))
                .withPrimaryToSecondaryMapper(
                    (BlockCachePolicy p) ->
                        Set.of(
                            new ResourceID(
                                p.getSpec().getTargetRef().getName(),
                                p.getMetadata().getNamespace())))
                .build(),
            ctx);
    var configMaps =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(ConfigMap.class, BlockCachePolicy.class)
                .withName("configmaps")
                .withSecondaryToPrimaryMapper(
                    cm ->
                        policies(
                            ctx,
                            cm,
                            p ->
                                cm.getMetadata()
                                        .getName()
                                        .equals(p.getSpec().getHbaseSiteConfigMap())
                                    || cm.getMetadata()
                                        .getName()
                                        .equals(Desired.regionServerConfigMapName(p))
                                    || cm.getMetadata()
                                        .getName()
                                        .equals(Desired.masterConfigMapName(p))
                                    || cm.getMetadata()
                                        .getName()
                                        .equals(StorageManager.legacyBackupName(p))
                                    || cm.getMetadata().getName().equals(caConfigMap(p))))
                .withPrimaryToSecondaryMapper(
                    (BlockCachePolicy p) ->
                        Set.of(
                            new ResourceID(
                                p.getSpec().getHbaseSiteConfigMap(),
                                p.getMetadata().getNamespace()),
                            new ResourceID(
                                Desired.regionServerConfigMapName(p),
                                p.getMetadata().getNamespace())))
                .build(),
            ctx);
    var pods =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(Pod.class, BlockCachePolicy.class)
                .withName("pods")
                .withLabelSelector(STATEFULSET_POD_LABEL)
                .withSecondaryToPrimaryMapper(
                    pod ->
                        policies(
                            ctx, pod, p -> ordinal(pod, p.getSpec().getTargetRef().getName()) >= 0))
                .withPrimaryToSecondaryMapper((BlockCachePolicy p) -> Set.of())
                .build(),
            ctx);
    // every budget of a watched namespace: one that another tool creates for the RegionServers
    // makes the operator drop its own
    var budgets =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(PodDisruptionBudget.class, BlockCachePolicy.class)
                .withName("poddisruptionbudgets")
                .withSecondaryToPrimaryMapper(b -> policies(ctx, b, p -> true))
                .withPrimaryToSecondaryMapper((BlockCachePolicy p) -> Set.of())
                .build(),
            ctx);
    return new Informers(statefulSets, configMaps, pods, budgets, ctx.getPrimaryCache());
  }

  private static Set<ResourceID> policies(
      EventSourceContext<BlockCachePolicy> ctx, HasMetadata r, Predicate<BlockCachePolicy> match) {
    String ns = r.getMetadata().getNamespace();
    return ctx.getPrimaryCache()
        .list(ns)
        .filter(
            p ->
                p.getSpec() != null
                    && p.getSpec().getTargetRef() != null
                    && p.getSpec().getTargetRef().getName() != null)
        .filter(match)
        .map(ResourceID::fromResource)
        .collect(Collectors.toSet());
  }

  /** spec.hbase.tls.caConfigMap, or null. */
  private static String caConfigMap(BlockCachePolicy p) {
    var hbase = p.getSpec().getHbase();
    return hbase == null || hbase.getTls() == null ? null : hbase.getTls().getCaConfigMap();
  }
}
