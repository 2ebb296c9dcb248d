package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RecreateStatus;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The operator's own record of the StatefulSet recreates it has under way: one ConfigMap {@value
 * #NAME} in the operator's namespace, one entry per policy UID with what the operator checked
 * against the live StatefulSet just before its orphan delete (policy, StatefulSet name and UID,
 * when it was saved, the SHA-256 of the manifest to create again). The manifest itself stays in the
 * policy's status, where users see it; the status is writable by more than the operator (under
 * {@code scope=Prerequisites} every namespace admin may write it), so the operator creates a
 * StatefulSet from it only when this record vouches for exactly that manifest (issue 49). Tenants
 * cannot write the operator's namespace; the record survives a restart and is read by whichever
 * replica leads next. An entry goes when its recreate is done or dropped, and with its policy.
 */
final class RecreateLedger {
  private static final org.slf4j.Logger log =
      org.slf4j.LoggerFactory.getLogger(RecreateLedger.class);

  /** The ConfigMap's name, in the operator's namespace (the chart's Role names it). */
  static final String NAME = "hbase-cache-operator-recreates";

  private final String namespace;

  /**
   * @param namespace the operator's own namespace; null: the client's (its kubeconfig's, else
   *     {@code default})
   */
  RecreateLedger(String namespace) {
    this.namespace = namespace;
  }

  String namespace(KubernetesClient client) {
    if (namespace != null) {
      return namespace;
    }
    return client.getNamespace() != null ? client.getNamespace() : "default";
  }

  /** The entry for a saved recreate of this policy: what must match for the create. */
  static String entry(BlockCachePolicy policy, RecreateStatus saved) {
    Map<String, String> e = new LinkedHashMap<>();
    e.put("namespace", policy.getMetadata().getNamespace());
    e.put("policy", policy.getMetadata().getName());
    e.put("statefulSet", saved.getStatefulSet());
    e.put("uid", saved.getUid());
    e.put("savedAt", saved.getSavedAt());
    e.put("manifestSha256", sha256(saved.getManifest()));
    return Serialization.asJson(e);
  }

  /** Records the recreate before the orphan delete (overwriting an earlier one of the policy). */
  void record(KubernetesClient client, BlockCachePolicy policy, RecreateStatus saved) {
    put(client, policy.getMetadata().getUid(), entry(policy, saved));
  }

  /** Drops the policy's entry (its recreate done or no longer wanted, or the policy deleted). */
  void forget(KubernetesClient client, BlockCachePolicy policy) {
    try {
      put(client, policy.getMetadata().getUid(), null);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404) {
        throw e;
      }
    }
  }

  /**
   * Why the operator's record does not vouch for this saved recreate, or null when it does: an
   * entry for the policy's UID that matches the status field for field, and the manifest's digest.
   */
  String untrusted(KubernetesClient client, BlockCachePolicy policy, RecreateStatus saved) {
    String ns = namespace(client);
    ConfigMap ledger = client.configMaps().inNamespace(ns).withName(NAME).get();
    String held =
        ledger == null || ledger.getData() == null
            ? null
            : ledger.getData().get(policy.getMetadata().getUid());
    String where = "the operator's record of its recreates (ConfigMap " + ns + "/" + NAME + ")";
    if (held == null) {
      return where + " holds none for this policy";
    }
    if (!Objects.equals(held, entry(policy, saved))) {
      return where
          + " holds another"
          + (held.contains(sha256(saved.getManifest())) ? "" : " manifest")
          + " for this policy";
    }
    return null;
  }

  /**
   * The status about to be written: a recreate it no longer holds is done or no longer wanted, and
   * its record goes first (a record kept after the status dropped the recreate could vouch for a
   * copy of it written back later).
   */
  void settled(KubernetesClient client, BlockCachePolicy policy, BlockCachePolicyStatus next) {
    if (next.getRecreate() == null
        && policy.getStatus() != null
        && policy.getStatus().getRecreate() != null) {
      forget(client, policy);
    }
  }

  /** The policy is gone: its record of a recreate too (best effort: it is logged). */
  void forgetDeleted(KubernetesClient client, BlockCachePolicy policy) {
    if (policy.getStatus() == null || policy.getStatus().getRecreate() == null) {
      return;
    }
    try {
      forget(client, policy);
    } catch (RuntimeException e) {
      log.warn(
          "could not drop the recreate record of {}: {}",
          policy.getMetadata().getName(),
          e.toString());
    }
  }

  private void put(KubernetesClient client, String key, String value) {
    String ns = namespace(client);
    var configMaps = client.configMaps().inNamespace(ns);
    Map<String, Object> data = new HashMap<>();
    data.put(key, value); // null: the JSON merge patch removes the key
    String patch = Serialization.asJson(Map.of("data", data));
    try {
      configMaps.withName(NAME).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    } catch (KubernetesClientException e) {
      if (e.getCode() != 404 || value == null) {
        throw e;
      }
      try {
        configMaps
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName(NAME)
                    .withNamespace(ns)
                    .addToLabels(
                        dev.hbase.cache.operator.render.Desired.MANAGED_BY,
                        dev.hbase.cache.operator.render.Desired.FIELD_MANAGER)
                    .endMetadata()
                    .addToData(key, value)
                    .build())
            .create();
      } catch (KubernetesClientException raced) {
        if (raced.getCode() != 409) {
          throw raced;
        }
        configMaps.withName(NAME).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      }
    }
  }

  static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256")
                  .digest(Objects.toString(s, "").getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
