package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
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

  /** A ConfigMap of the policy's namespace, as the informer has it. */
  Optional<ConfigMap> configMap(String name) {
    return informers.configMaps().get(new ResourceID(name, namespace()));
  }

  /** A pod as the informer has it (the one the roller decided on). */
  Optional<Pod> cachedPod(ResourceID id) {
    return informers.pods().get(id);
  }
}
