package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.TransformingItemStore;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * What the operator watches besides the policies, and which policy each change concerns: the
 * reconciler's event sources, built once from JOSDK's EventSourceContext, and the policies' own
 * cache. The steps read them through a PolicyContext.
 *
 * <p>What is cached is bounded by what the policies name, not by what their namespaces hold (issue
 * 49): the target StatefulSet, the ConfigMaps a policy names or derives ({@link #configMapNames})
 * and the target's pods are each watched by name ({@link NamedWatches}); a ConfigMap, pod or
 * StatefulSet no policy names never reaches the operator. The one namespace-wide watch is of the
 * PodDisruptionBudgets (another budget that selects the RegionServers makes the operator drop its
 * own, and such a budget has any name): the cache keeps a summary of each ({@link #budgetSummary}:
 * names, owners, a selector of at most {@value #SELECTOR_CAP} bytes), at most ~{@value
 * #SUMMARY_BYTES_AT_MOST} bytes each whatever the budget holds, and it lists them {@value
 * #LIST_LIMIT} at a time.
 */
record Informers(
    NamedWatches<StatefulSet> statefulSets,
    NamedWatches<ConfigMap> configMaps,
    NamedWatches<Pod> pods,
    InformerEventSource<PodDisruptionBudget, BlockCachePolicy> budgets,
    IndexerResourceCache<BlockCachePolicy> policies) {

  /**
   * The StatefulSet controller labels every pod it creates with its name (the value is the pod's
   * name).
   */
  static final String STATEFULSET_POD_LABEL = "statefulset.kubernetes.io/pod-name";

  /** The largest budget selector (JSON) the summary keeps; a larger one is not evaluated. */
  static final int SELECTOR_CAP = 4096;

  /** What a budget's summary holds at most, beyond its selector (names, UIDs, four owners). */
  static final int SUMMARY_BYTES_AT_MOST = SELECTOR_CAP + 2048;

  /** Budgets per page of the budgets' list: what one page can hold is bounded too. */
  static final long LIST_LIMIT = 50;

  /** The annotation of a budget summary whose selector was too large to keep: its size. */
  static final String SELECTOR_TOO_LARGE = "cache.hbase.dev/selector-bytes";

  private static final Pattern ORDINAL = Pattern.compile("^(.*)-([0-9]+)$");

  /** The pod's ordinal in StatefulSet {@code stsName}, or -1 when it is not one of its pods. */
  static int ordinal(Pod p, String stsName) {
    Matcher m = ORDINAL.matcher(p.getMetadata().getName());
    return m.matches() && m.group(1).equals(stsName) ? Integer.parseInt(m.group(2)) : -1;
  }

  List<EventSource<?, BlockCachePolicy>> eventSources() {
    return List.of(statefulSets, configMaps, pods, budgets);
  }

  /** The watches' first lists in flight at once ({@link WatchStarts}). */
  static final int STARTING_AT_ONCE = 16;

  static Informers of(EventSourceContext<BlockCachePolicy> ctx) {
    var starts = new WatchStarts(STARTING_AT_ONCE);
    var statefulSets =
        new NamedWatches<>(
            "statefulsets",
            StatefulSet.class,
            ctx.getClient(),
            p -> target(p) == null ? Set.of() : Set.of(target(p)),
            null,
            starts);
    var configMaps =
        new NamedWatches<>(
            "configmaps",
            ConfigMap.class,
            ctx.getClient(),
            Informers::configMapNames,
            null,
            starts);
    // held by the observe step, which knows the StatefulSet's replicas (podsOf); only pods the
    // StatefulSet controller made (its label, the pod's name), not one named like them
    var pods =
        new NamedWatches<>("pods", Pod.class, ctx.getClient(), null, STATEFULSET_POD_LABEL, starts);
    var budgets =
        new InformerEventSource<>(
            InformerEventSourceConfiguration.from(PodDisruptionBudget.class, BlockCachePolicy.class)
                .withName("poddisruptionbudgets")
                .withItemStore(new TransformingItemStore<>(Informers::budgetSummary))
                .withInformerListLimit(LIST_LIMIT)
                .withSecondaryToPrimaryMapper(b -> policies(ctx, b, p -> true))
                .withPrimaryToSecondaryMapper((BlockCachePolicy p) -> Set.of())
                .build(),
            ctx);
    return new Informers(statefulSets, configMaps, pods, budgets, ctx.getPrimaryCache());
  }

  /**
   * The ConfigMaps a policy names or derives, in its namespace: the base hbase-site, the derived
   * RegionServer (and, with a masterRef, master) ConfigMaps, the CA of spec.hbase.tls.
   */
  static Set<String> configMapNames(BlockCachePolicy p) {
    if (p.getSpec() == null || p.getMetadata().getName() == null) {
      return Set.of();
    }
    Set<String> out = new HashSet<>();
    if (p.getSpec().getHbaseSiteConfigMap() != null) {
      out.add(p.getSpec().getHbaseSiteConfigMap());
    }
    out.add(Desired.regionServerConfigMapName(p));
    if (p.getSpec().getMasterRef() != null) {
      out.add(Desired.masterConfigMapName(p));
    }
    if (caConfigMap(p) != null) {
      out.add(caConfigMap(p));
    }
    return out;
  }

  /**
   * The target's pods as the observe step reads them: the policy holds {@code <target>-<i>} for
   * every ordinal below the StatefulSet's replicas (spec or status, whichever is more), and any pod
   * above that it held before and that still exists (a scale-down's leaving pods, until they are
   * gone).
   */
  List<Pod> podsOf(BlockCachePolicy policy, StatefulSet sts) {
    String name = sts.getMetadata().getName();
    int created =
        sts.getStatus() == null || sts.getStatus().getReplicas() == null
            ? 0
            : sts.getStatus().getReplicas();
    int upTo = Math.max(Observation.replicas(sts), created);
    Set<String> names = new HashSet<>();
    for (int i = 0; i < upTo; i++) {
      names.add(name + "-" + i);
    }
    for (Pod p : pods().list(policy)) {
      if (ordinal(p, name) >= 0) {
        names.add(p.getMetadata().getName());
      }
    }
    pods().hold(policy, names);
    return pods().list(policy);
  }

  /**
   * What the cache keeps of a budget: its names, UID, version, the operator's labels, owners that
   * are policies (four at most) and its spec's selector (when at most {@value #SELECTOR_CAP} bytes
   * of JSON; else an annotation with its size, and the budget is taken to select every pod) and
   * numbers. Not its annotations, other labels, managedFields or status: a budget of any size costs
   * the operator at most ~{@value #SUMMARY_BYTES_AT_MOST} bytes.
   */
  static PodDisruptionBudget budgetSummary(PodDisruptionBudget b) {
    var m = b.getMetadata();
    var labels = new HashMap<String, String>();
    if (m.getLabels() != null) {
      for (String k : List.of(Desired.MANAGED_BY, Desired.POLICY_LABEL)) {
        String v = m.getLabels().get(k);
        if (v != null && v.length() <= 63) {
          labels.put(k, v);
        }
      }
    }
    var owners =
        m.getOwnerReferences() == null
            ? List.<io.fabric8.kubernetes.api.model.OwnerReference>of()
            : m.getOwnerReferences().stream()
                .filter(o -> "BlockCachePolicy".equals(o.getKind()))
                .limit(4)
                .toList();
    var summary =
        new PodDisruptionBudgetBuilder()
            .withNewMetadata()
            .withName(m.getName())
            .withNamespace(m.getNamespace())
            .withUid(m.getUid())
            .withResourceVersion(m.getResourceVersion())
            .withLabels(labels)
            .withOwnerReferences(owners)
            .endMetadata()
            .build();
    if (b.getSpec() != null) {
      var spec = new io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetSpec();
      spec.setMaxUnavailable(b.getSpec().getMaxUnavailable());
      spec.setMinAvailable(b.getSpec().getMinAvailable());
      if (b.getSpec().getSelector() != null) {
        int bytes = Serialization.asJson(b.getSpec().getSelector()).length();
        if (bytes <= SELECTOR_CAP) {
          spec.setSelector(b.getSpec().getSelector());
        } else {
          summary.getMetadata().setAnnotations(Map.of(SELECTOR_TOO_LARGE, Integer.toString(bytes)));
        }
      }
      summary.setSpec(spec);
    }
    return summary;
  }

  /** spec.targetRef.name, or null. */
  static String target(BlockCachePolicy p) {
    return p.getSpec() == null || p.getSpec().getTargetRef() == null
        ? null
        : p.getSpec().getTargetRef().getName();
  }

  private static Set<ResourceID> policies(
      EventSourceContext<BlockCachePolicy> ctx, HasMetadata r, Predicate<BlockCachePolicy> match) {
    String ns = r.getMetadata().getNamespace();
    return ctx.getPrimaryCache()
        .list(ns)
        .filter(p -> ns.equals(p.getMetadata().getNamespace())) // as DisruptionBudgetStep.apply
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
