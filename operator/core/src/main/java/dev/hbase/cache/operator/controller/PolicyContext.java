package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Instant;
import java.util.Optional;

/**
 * One reconcile (or cleanup) of one policy: the policy as the reconcile got it, the API client, the
 * operator's informer caches and the time the reconcile began. The reconciler makes one at the
 * start and hands it to each step, which reads the caches through it and writes through its client.
 */
record PolicyContext(
    BlockCachePolicy policy, KubernetesClient client, Informers informers, Instant now) {

  String namespace() {
    return policy.getMetadata().getNamespace();
  }

  /**
   * A ConfigMap of the policy's namespace: as its watch has it when the policy names it ({@link
   * Informers#configMapNames}), else read once from the API server (never cached).
   */
  Optional<ConfigMap> configMap(String name) {
    return informers.configMaps().get(policy, name);
  }

  /** The policy's target StatefulSet as its watch has it, if it exists. */
  Optional<StatefulSet> target() {
    return informers.statefulSets().get(policy, policy.getSpec().getTargetRef().getName());
  }

  /** A pod as its watch has it (the one the roller decided on). */
  Optional<Pod> cachedPod(ResourceID id) {
    return informers.pods().get(policy, id.getName());
  }
}
