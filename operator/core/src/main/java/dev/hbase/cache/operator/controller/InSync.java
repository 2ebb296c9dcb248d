package dev.hbase.cache.operator.controller;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Map;
import java.util.Objects;

/**
 * Whether an object as the informer cache shows it already carries what a server-side apply would
 * set, so the apply can be skipped (no PATCH while nothing changed). A desired object is covered
 * when every field it sets has that value in the actual one; list items are matched by {@code name}
 * where they have one (containers, env, volumes), else by value. Fields the operator stops setting
 * are not seen here: every desired object of the operator carries the revision (or, for a
 * ConfigMap, its whole data, compared exactly), which changes whenever the plan does.
 */
final class InSync {
  /** fabric8's own serialization (its Jackson modules), as the client writes the objects. */
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private InSync() {}

  static boolean configMap(ConfigMap actual, ConfigMap desired) {
    return actual != null
        && Objects.equals(actual.getData(), desired.getData())
        && covers(actual, desired);
  }

  static boolean covers(HasMetadata actual, HasMetadata desired) {
    return actual != null && covers(tree(actual), tree(desired));
  }

  static boolean covers(JsonNode actual, JsonNode desired) {
    if (desired == null || desired.isNull()) {
      return true;
    }
    if (actual == null || actual.isNull()) {
      return false;
    }
    if (desired.isObject()) {
      if (!actual.isObject()) {
        return false;
      }
      for (Map.Entry<String, JsonNode> f : desired.properties()) {
        if (!covers(actual.get(f.getKey()), f.getValue())) {
          return false;
        }
      }
      return true;
    }
    if (desired.isArray()) {
      if (!actual.isArray()) {
        return false;
      }
      for (JsonNode want : desired) {
        JsonNode key = want.isObject() ? want.get("name") : null;
        boolean found = false;
        for (JsonNode have : actual) {
          if (key != null
              ? key.equals(have.get("name")) && covers(have, want)
              : covers(have, want)) {
            found = true;
            break;
          }
        }
        if (!found) {
          return false;
        }
      }
      return true;
    }
    return desired.equals(actual) || sameQuantity(actual, desired);
  }

  /** "1Gi" and "1024Mi" are one quantity (the API server may store either form). */
  private static boolean sameQuantity(JsonNode a, JsonNode b) {
    if (!a.isTextual() || !b.isTextual()) {
      return false;
    }
    try {
      return Quantity.getAmountInBytes(new Quantity(a.asText()))
              .compareTo(Quantity.getAmountInBytes(new Quantity(b.asText())))
          == 0;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static JsonNode tree(Object o) {
    return SERIALIZATION.convertValue(o, JsonNode.class);
  }
}
