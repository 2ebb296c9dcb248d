package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import org.junit.jupiter.api.Test;

class InSyncTest {
  static final String LIVE =
      """
      apiVersion: apps/v1
      kind: StatefulSet
      metadata: {name: rs, namespace: ns, resourceVersion: "7", labels: {app: rs}}
      spec:
        replicas: 3
        updateStrategy: {type: OnDelete}
        template:
          metadata: {annotations: {cache.hbase.dev/config-hash: abc, other: x}}
          spec:
            terminationGracePeriodSeconds: 120
            containers:
            - name: sidecar
              image: busybox
            - name: regionserver
              image: hbase:2.6.4
              env: [{name: A, value: "1"}, {name: HBASE_HEAPSIZE, value: 1024m}]
              resources: {limits: {memory: 4Gi}}
            volumes:
            - {name: config, configMap: {name: p-rs-site}}
            - {name: bucketcache, emptyDir: {medium: Memory, sizeLimit: 1Gi}}
      """;

  static StatefulSet sts(String yaml) {
    return Serialization.unmarshal(yaml, StatefulSet.class);
  }

  static StatefulSet desired(String heap, String hash, String sizeLimit) {
    return sts(
        """
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: rs, namespace: ns}
        spec:
          updateStrategy: {type: OnDelete}
          template:
            metadata: {annotations: {cache.hbase.dev/config-hash: %s}}
            spec:
              terminationGracePeriodSeconds: 120
              containers:
              - name: regionserver
                env: [{name: HBASE_HEAPSIZE, value: %s}]
              volumes:
              - {name: config, configMap: {name: p-rs-site}}
              - {name: bucketcache, emptyDir: {medium: Memory, sizeLimit: %s}}
        """
            .formatted(hash, heap, sizeLimit));
  }

  @Test
  void aStatefulSetThatCarriesEveryDesiredFieldIsInSync() {
    assertThat(InSync.covers(sts(LIVE), desired("1024m", "abc", "1Gi"))).isTrue();
    assertThat(InSync.covers(sts(LIVE), desired("1024m", "abc", "1024Mi")))
        .as("same quantity, other form")
        .isTrue();
  }

  @Test
  void anyDifferentOrMissingDesiredValueIsNotInSync() {
    assertThat(InSync.covers(sts(LIVE), desired("2048m", "abc", "1Gi"))).as("env value").isFalse();
    assertThat(InSync.covers(sts(LIVE), desired("1024m", "def", "1Gi"))).as("revision").isFalse();
    assertThat(InSync.covers(sts(LIVE), desired("1024m", "abc", "2Gi"))).as("quantity").isFalse();
    StatefulSet renamed = desired("1024m", "abc", "1Gi");
    renamed.getSpec().getTemplate().getSpec().getContainers().get(0).setName("hbase");
    assertThat(InSync.covers(sts(LIVE), renamed)).as("list items match by name").isFalse();
    assertThat(InSync.covers(null, desired("1024m", "abc", "1Gi")))
        .as("not there at all")
        .isFalse();
  }

  @Test
  void aConfigMapIsInSyncOnlyWithExactlyTheDesiredData() {
    ConfigMap want =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName("p-rs-site")
            .addToLabels("cache.hbase.dev/policy", "p")
            .endMetadata()
            .addToData("hbase-site.xml", "<x/>")
            .build();
    ConfigMap live =
        new ConfigMapBuilder(want)
            .editMetadata()
            .withResourceVersion("3")
            .addToLabels("extra", "1")
            .endMetadata()
            .build();
    assertThat(InSync.configMap(live, want)).isTrue();
    assertThat(
            InSync.configMap(
                new ConfigMapBuilder(live).addToData("stale.xml", "<y/>").build(), want))
        .as("a key we no longer set")
        .isFalse();
    assertThat(
            InSync.configMap(
                new ConfigMapBuilder(live).addToData("hbase-site.xml", "<z/>").build(), want))
        .isFalse();
    assertThat(
            InSync.configMap(
                new ConfigMapBuilder(live)
                    .editMetadata()
                    .withLabels(java.util.Map.of())
                    .endMetadata()
                    .build(),
                want))
        .as("our labels gone")
        .isFalse();
  }
}
