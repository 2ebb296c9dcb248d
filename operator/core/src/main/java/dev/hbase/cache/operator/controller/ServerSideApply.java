package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * How the steps write the objects the operator owns: a server-side apply under the operator's field
 * manager, taking over conflicting fields. A step first asks {@link InSync} whether the informer
 * cache already shows the object so, and skips the write when it does.
 */
final class ServerSideApply {
  private ServerSideApply() {}

  static void apply(KubernetesClient client, HasMetadata desired) {
    client.resource(desired).fieldManager(Desired.FIELD_MANAGER).forceConflicts().serverSideApply();
  }
}
