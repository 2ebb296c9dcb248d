package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.SimulatedHBase;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubeapitest.cert.CertManager;
import io.fabric8.kubeapitest.junit.KubeConfig;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import java.io.FileInputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What every API-server test of the operator stands on: a namespace per test with a base ConfigMap,
 * a RegionServer StatefulSet and pods ({@link FakeKube}, or the real StatefulSet controller), the
 * operator on its informers, and helpers to read its policies. The test classes (RollIT,
 * RollFaultsIT, RollTakeoverIT, AdviceRecommendIT, AdviceApplyIT, AdviceGrowIT, StorageIT,
 * ObservabilityIT, ConfinedDeputyIT, OwnedObjectsIT, CacheBoundsIT, MasterSiteIT) extend it and
 * carry {@code @EnableKubeAPIServer} themselves: one kube-apiserver + etcd per class, so failsafe
 * runs classes in parallel forks (operator/core/pom.xml). There is no kubelet: {@link FakeKube}
 * plays it, and the StatefulSet controller and garbage collector too, except in the tests that
 * start the real ones ({@link ControllerManager}, where revisions and ownership matter); {@link
 * SimulatedHBase} plays the HBase master.
 */
@ExtendWith(OperatorHarness.SharedCertificates.class)
abstract class OperatorHarness {
  static KubernetesClient client;
  @KubeConfig static String kubeConfigYaml;
  static final AtomicInteger NS = new AtomicInteger();
  static final String STS = "rs";
  static final String BASE_SITE =
      "<configuration>\n"
          + "<property><name>hbase.zookeeper.quorum</name><value>zk-0.zk:2181</value></property>\n"
          + "<property><name>hbase.bucketcache.ioengine</name><value>offheap</value></property>\n"
          + "<property><name>hbase.rootdir</name><value>file:///data/hbase</value></property>\n"
          + "</configuration>\n";

  final List<AutoCloseable> closeAfter = new ArrayList<>();
  String ns;
  SimulatedHBase hbase;
  FakeKube kube;

  /** Set before {@link #cluster}: the real StatefulSet controller creates the pods. */
  ControllerManager controllers;

  /**
   * Set before {@link #operator}: the operator's own namespace (its record of recreates); null: its
   * client's.
   */
  String operatorNamespace;

  /** The reconciler of the last operator started: its caches, for tests that assert on them. */
  BlockCachePolicyReconciler reconciler;

  /**
   * kube-api-test writes its certificates into the shared {@code ~/.kubeapitest} on first use,
   * behind a lock of its own JVM only: two forks starting at once on a machine without them could
   * each write a part (a key of one, a certificate of the other). This extension runs before the
   * subclass's {@code @EnableKubeAPIServer} (superclass extensions first) and creates them under a
   * file lock across processes; once they exist, forks only read that directory.
   */
  static final class SharedCertificates implements BeforeAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
      String dir = KubeAPIServerConfigBuilder.anAPIServerConfig().build().getKubeAPITestDir();
      Files.createDirectories(Path.of(dir));
      Path lock = Path.of(System.getProperty("java.io.tmpdir"), "kubeapitest-certificates.lock");
      try (FileChannel channel =
              FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock held = channel.lock()) {
        new CertManager(dir).createCertificatesIfNeeded();
      }
    }
  }

  @BeforeAll
  static void crd() throws Exception {
    try (var in = new FileInputStream("../../crds/blockcachepolicies.cache.hbase.dev-v1.yml")) {
      var crd = client.apiextensions().v1().customResourceDefinitions().load(in).item();
      client.resource(crd).serverSideApply();
      client
          .apiextensions()
          .v1()
          .customResourceDefinitions()
          .withName(crd.getMetadata().getName())
          .waitUntilCondition(CrdValidationTest::established, 30, TimeUnit.SECONDS);
    }
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closeAfter) {
      c.close();
    }
  }

  // ------------------------------------------------------------------ setup

  /** A namespace with the base ConfigMap, a 3-replica StatefulSet and its Ready pods. */
  void cluster(String memoryLimit, boolean withClaimTemplate) {
    namespaceWithBaseConfig("it-");
    var b =
        new StatefulSetBuilder()
            .withNewMetadata()
            .withName(STS)
            .withNamespace(ns)
            .endMetadata()
            .withNewSpec()
            .withReplicas(3)
            .withServiceName(STS)
            .withNewSelector()
            .addToMatchLabels("app", "rs")
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .addToLabels("app", "rs")
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("regionserver")
            .withImage("hbase:2.6.4")
            .withNewResources()
            .addToLimits("memory", new Quantity(memoryLimit))
            .addToRequests("memory", new Quantity(memoryLimit))
            .endResources()
            .addNewVolumeMount()
            .withName("config")
            .withMountPath("/etc/hbase")
            .endVolumeMount()
            .endContainer()
            .addNewVolume()
            .withName("config")
            .withNewConfigMap()
            .withName("hbase-site")
            .endConfigMap()
            .endVolume()
            .endSpec()
            .endTemplate()
            .endSpec();
    StatefulSet sts = b.build();
    if (withClaimTemplate) {
      sts.getSpec().setVolumeClaimTemplates(new ArrayList<>());
    }
    client.resource(sts).create();
    hbase = new SimulatedHBase(Instant::now);
    hbase.reportDelay =
        Duration.ofMillis(300); // registration lag: the roller must wait for the first report
    kube =
        new FakeKube(
            client,
            ns,
            STS,
            hbase,
            Map.of(
                "rs-0",
                List.of("r00", "r01", "r02"),
                "rs-1",
                List.of("r10"),
                "rs-2",
                List.of("r20", "r21")));
    kube.kubeletOnly = controllers != null;
    closeAfter.add(kube.start());
    await().atMost(Duration.ofSeconds(30)).until(() -> kube.allReadyAndRegistered(3));
    kube.maxDown = 0; // from here on, only what the operator causes
  }

  /** A new namespace {@code <prefix>N} ({@link #ns}) with the base hbase-site ConfigMap. */
  void namespaceWithBaseConfig(String prefix) {
    ns = prefix + NS.incrementAndGet();
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("hbase-site")
                .withNamespace(ns)
                .endMetadata()
                .addToData("hbase-site.xml", BASE_SITE)
                .addToData("log4j2.properties", "rootLogger.level=info\n")
                .build())
        .create();
  }

  /** The events of the test's namespace. */
  List<io.fabric8.kubernetes.api.model.Event> events() {
    return client.v1().events().inNamespace(ns).list().getItems();
  }

  /**
   * Events are sent off the reconcile thread (after the status they go with, at times): an
   * assertion on them waits a little.
   */
  static void eventually(org.awaitility.core.ThrowingRunnable assertion) {
    await().atMost(Duration.ofSeconds(15)).untilAsserted(assertion);
  }

  BlockCacheOperator operator(LeaderElectionConfiguration le) {
    return operator(le, client);
  }

  /** The operator on its own client (e.g. one that counts the requests it sends). */
  BlockCacheOperator operator(LeaderElectionConfiguration le, KubernetesClient client) {
    return operator(
        le, client, dev.hbase.cache.operator.metrics.SecuredProbes.jmx(Duration.ofSeconds(5)));
  }

  /** The operator with these probes for info servers over HTTPS (spec.hbase.tls). */
  BlockCacheOperator operator(
      LeaderElectionConfiguration le,
      KubernetesClient client,
      dev.hbase.cache.operator.metrics.SecuredProbes secured) {
    var reconciler =
        new BlockCachePolicyReconciler(
            Clock.systemUTC(),
            (settings, login) -> {
              hbase.connects++;
              hbase.connectedAs.add(login == null ? null : login.principal());
              return hbase;
            },
            hbase.probe(),
            dev.hbase.cache.operator.plan.JvmOptions.Trust.ALLOW_LIST,
            () -> true,
            secured,
            BlockCachePolicyReconciler.DEFAULT_CLUSTER_DOMAIN,
            operatorNamespace);
    this.reconciler = reconciler;
    BlockCacheOperator op = new BlockCacheOperator(client, Set.of(ns), le, reconciler);
    op.start();
    closeAfter.add(0, op::stop);
    return op;
  }

  BlockCachePolicy policy(String name, String specYaml) {
    String doc =
        "apiVersion: cache.hbase.dev/v1alpha1\nkind: BlockCachePolicy\nmetadata:\n  name: "
            + name
            + "\n  namespace: "
            + ns
            + "\nspec:\n  targetRef:\n    name: "
            + STS
            + "\n  hbaseSiteConfigMap: hbase-site\n"
            + "  metrics:\n    interval: 10s\n"
            + specYaml;
    return client.resource(Serialization.unmarshal(doc, BlockCachePolicy.class)).create();
  }

  /** A JSON merge patch of a policy: no resourceVersion, so no conflict with status writes. */
  void mergePatch(String name, String json) {
    client
        .resources(BlockCachePolicy.class)
        .inNamespace(ns)
        .withName(name)
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON_MERGE),
            json);
  }

  BlockCachePolicy get(String name) {
    return client.resources(BlockCachePolicy.class).inNamespace(ns).withName(name).get();
  }

  boolean condition(String name, String type, String status) {
    BlockCachePolicy p = get(name);
    return p != null
        && p.getStatus() != null
        && Conditions.find(p.getStatus().getConditions(), type)
            .map(c -> status.equals(c.getStatus()))
            .orElse(false);
  }

  boolean idleAndApplied(String name) {
    BlockCachePolicy p = get(name);
    return p != null
        && p.getStatus() != null
        && p.getStatus().getRollout() != null
        && p.getStatus().getRollout().getPhase() == Phase.Idle
        && condition(name, "Ready", "True");
  }

  /** The requested size of cache PVC {@code bucketcache-rs-<i>}. */
  Quantity pvcSize(int i) {
    return client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName("bucketcache-rs-" + i)
        .get()
        .getSpec()
        .getResources()
        .getRequests()
        .get("storage");
  }

  StatefulSet sts() {
    return client.apps().statefulSets().inNamespace(ns).withName(STS).get();
  }

  /**
   * An edit on the latest version of the policy, retried on a conflict (409) as a user would: the
   * operator writes the status meanwhile, and fabric8's edit sends the version it read.
   */
  void editPolicy(String name, java.util.function.UnaryOperator<BlockCachePolicy> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        client.resources(BlockCachePolicy.class).inNamespace(ns).withName(name).edit(change);
        return;
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  LeaderElectionConfiguration leader(String identity) {
    return new LeaderElectionConfiguration(
        "hbase-cache-operator",
        ns,
        Duration.ofSeconds(4),
        Duration.ofSeconds(3),
        Duration.ofMillis(500),
        identity,
        null,
        false);
  }

  String holder() {
    Lease l = client.leases().inNamespace(ns).withName("hbase-cache-operator").get();
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }

  // ------------------------------------ shared by ConfinedDeputyIT, OwnedObjectsIT,
  // ObservabilityIT

  boolean idle(String name) {
    BlockCachePolicy p = get(name);
    return p != null
        && p.getStatus() != null
        && p.getStatus().getRollout() != null
        && p.getStatus().getRollout().getPhase()
            == dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase.Idle;
  }

  /** The reason of condition {@code type} when it has {@code status}, else "". */
  String reason(String name, String type, String status) {
    BlockCachePolicy p = get(name);
    if (p == null || p.getStatus() == null) {
      return "";
    }
    return Conditions.find(p.getStatus().getConditions(), type)
        .filter(c -> status.equals(c.getStatus()))
        .map(c -> c.getReason())
        .orElse("");
  }

  String conditionMessage(String name, String type) {
    return Conditions.find(get(name).getStatus().getConditions(), type)
        .map(c -> c.getMessage())
        .orElse("");
  }

  /** The StatefulSet as the test made it: same generation, no field of the operator's. */
  void assertUntouched(Long generation) {
    StatefulSet s = sts();
    assertThat(s.getMetadata().getGeneration()).isEqualTo(generation);
    assertThat(s.getMetadata().getManagedFields())
        .noneMatch(
            m -> dev.hbase.cache.operator.render.Desired.FIELD_MANAGER.equals(m.getManager()));
    assertThat(kube.deletes).isEmpty();
  }

  /** A namespace with the base ConfigMap and no StatefulSet: the policy's target is missing. */
  String namespaceWithoutTarget() {
    namespaceWithBaseConfig("cd-");
    hbase = new SimulatedHBase(Instant::now);
    return ns;
  }
}
