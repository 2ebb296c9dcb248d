package dev.hbase.cache.api.v1alpha1;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The schema nodes of a generated CRD by path: {@code .} for the root, {@code .spec.rollout} for a
 * property, {@code .status.rollout.inFlight[].phase} for a property of an array's items. What
 * {@code kubectl explain} shows a description for: the root and every property, the properties of
 * array items included (not the items or map values themselves, which it does not describe).
 */
final class CrdSchema {
  private CrdSchema() {}

  static CustomResourceDefinition load(Path crd) throws IOException {
    try (InputStream in = Files.newInputStream(crd)) {
      return new KubernetesSerialization().unmarshal(in, CustomResourceDefinition.class);
    }
  }

  /** The only version's openAPIV3Schema. */
  static JSONSchemaProps root(CustomResourceDefinition crd) {
    return crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
  }

  /** Every node by path, depth first, properties in the CRD's order. */
  static Map<String, JSONSchemaProps> nodes(JSONSchemaProps root) {
    Map<String, JSONSchemaProps> out = new LinkedHashMap<>();
    out.put(".", root);
    walk("", root, out);
    return out;
  }

  private static void walk(String path, JSONSchemaProps node, Map<String, JSONSchemaProps> out) {
    if (node.getProperties() != null) {
      node.getProperties()
          .forEach(
              (name, child) -> {
                out.put(path + "." + name, child);
                walk(path + "." + name, child, out);
              });
    }
    JSONSchemaProps items = node.getItems() == null ? null : node.getItems().getSchema();
    if (items != null) {
      walk(path + "[]", items, out);
    }
  }
}
