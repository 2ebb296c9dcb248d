package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The HMaster's derived hbase-site on a real API server (issue 52): with spec.hbase.version unset,
 * the master keys only HBase 2.6 has (the CacheAwareLoadBalancer) reach the master's ConfigMap only
 * once the operator has seen the master report 2.6, never on a master that reports 2.5, and the
 * master is pointed at that ConfigMap only once its line is known. {@link
 * dev.hbase.cache.operator.hbase.SimulatedHBase#version} plays what the master reports. The roll's
 * side of the same issue is {@code
 * RollIT.aPersistentFilePlanForTwoSixIsNotRolledOntoATwoFiveMaster}.
 */
@EnableKubeAPIServer
class MasterSiteIT extends OperatorHarness {
  /**
   * Issue 52, the master side: a PersistentFile policy with a masterRef and no spec.hbase.version,
   * on a master that reports 2.5.13. The master's derived ConfigMap never holds the
   * CacheAwareLoadBalancer (a 2.5 master restarted with it does not start, HBaseLineIT), not even
   * before the operator first asked the master: every version of it the API server's watch shows
   * has the line-neutral keys alone. Before, the first apply wrote 2.6's keys at once.
   */
  @Test
  void aPolicyWithoutALineNeverGivesATwoFiveMasterTheCacheAwareBalancer() throws Exception {
    cluster("4Gi", false);
    masterStatefulSet();
    hbase.version = "2.5.13";
    List<Map<String, String>> sites = masterSites("five");
    operator(null);
    policy("five", MASTER_REF + "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n");

    await()
        .atMost(Duration.ofSeconds(90))
        .failFast(
            "the master's ConfigMap got a key only 2.6 has", () -> !twoSixKeys(sites).isEmpty())
        .untilAsserted(
            () -> {
              BlockCachePolicyStatus st = get("five").getStatus();
              assertThat(st).isNotNull();
              assertThat(st.getMasterVersion()).isEqualTo("2.5.13");
              assertThat(reason("five", "Degraded", "True")).isEqualTo("HBaseVersionMismatch");
              assertThat(st.getPlan().getWarnings())
                  .anySatisfy(
                      w ->
                          assertThat(w)
                              .contains(
                                  "the HMaster reports HBase 2.5.13",
                                  "spec.hbase.version is unset",
                                  "are not written: a 2.5 master configured with the"
                                      + " CacheAwareLoadBalancer does not start"));
              // seen on 2.5: pointed at its derived hbase-site, the line-neutral keys in it
              assertThat(masterVolume()).isEqualTo("five-master-site");
            });
    Thread.sleep(5_000); // more reconciles
    assertThat(sites)
        .as("every hbase-site.xml the master's derived ConfigMap held")
        .isNotEmpty()
        .allSatisfy(
            site ->
                assertThat(site)
                    .doesNotContainValue(CACHE_AWARE)
                    .doesNotContainKeys(
                        "hbase.rsgroup.grouploadbalancer.class",
                        "hbase.master.balancer.stochastic.regionCountCost")
                    .containsEntry("hbase.assignment.dispatch.wait.msec", "10")
                    .containsEntry("hbase.rootdir", "file:///data/hbase"));
    assertThat(kube.deletes).as("no pod rolled onto the 2.6 plan").isEmpty();
  }

  /**
   * The same policy on a master that reports nothing at first, then 2.6.4: while the operator has
   * not seen the master's version, the derived ConfigMap has the line-neutral keys alone, the
   * master is left on its own hbase-site, and the plan's warnings say why; the RegionServers roll
   * meanwhile. Once the master reports 2.6.4 (the cluster idle: the operator asks it for the
   * version alone), the ConfigMap gets the CacheAwareLoadBalancer and only then is the master
   * pointed at it, so that its one restart is onto 2.6's keys; no RegionServer restarts for it.
   */
  @Test
  void aPolicyWithoutALineGivesATwoSixMasterTheCacheAwareBalancerOnceItIsSeen() throws Exception {
    cluster("4Gi", true);
    masterStatefulSet();
    hbase.version = null;
    List<Map<String, String>> sites = masterSites("six");
    List<Boolean> pointedOntoTheBalancer = masterPointings("six");
    operator(null);
    policy("six", MASTER_REF + "  mode: PersistentFile\n  memory:\n    bucketCache: 1Gi\n");

    await()
        .atMost(Duration.ofSeconds(120))
        // one failFast condition (a second replaces the first)
        .failFast(
            "a key only 2.6 has, or the master pointed, before the master was seen",
            () -> !twoSixKeys(sites).isEmpty() || !pointedOntoTheBalancer.isEmpty())
        .until(() -> idleAndApplied("six"));
    Thread.sleep(3_000); // a reconcile or two while idle, still unseen
    assertThat(get("six").getStatus().getMasterVersion()).isNull();
    assertThat(get("six").getStatus().getPlan().getWarnings())
        .anySatisfy(w -> assertThat(w).contains("has not yet seen the HMaster report its version"));
    assertThat(sites)
        .isNotEmpty()
        .allSatisfy(site -> assertThat(site).doesNotContainValue(CACHE_AWARE));
    assertThat(masterVolume()).as("not pointed before the line is known").isEqualTo("hbase-site");
    assertThat(kube.deletes).hasSize(3);

    hbase.version = "2.6.4";
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              BlockCachePolicyStatus st = get("six").getStatus();
              assertThat(st.getMasterVersion()).isEqualTo("2.6.4");
              assertThat(masterSite("six"))
                  .containsEntry("hbase.master.loadbalancer.class", CACHE_AWARE)
                  .containsEntry("hbase.master.balancer.stochastic.regionCountCost", "500")
                  .containsEntry("hbase.assignment.dispatch.wait.msec", "10");
              assertThat(masterVolume()).isEqualTo("six-master-site");
              assertThat(st.getPlan().getWarnings()).isNull();
            });
    assertThat(pointedOntoTheBalancer)
        .as("whether the ConfigMap held the balancer each time the master was seen pointed at it")
        .containsExactly(true);
    assertThat(kube.deletes).as("the master's keys restart no RegionServer").hasSize(3);
    assertThat(idleAndApplied("six")).isTrue();
  }

  /** The keys only 2.6 has in any of {@code sites}, with their values. */
  static List<String> twoSixKeys(List<Map<String, String>> sites) {
    return sites.stream()
        .flatMap(m -> m.entrySet().stream())
        .filter(
            e ->
                CACHE_AWARE.equals(e.getValue())
                    || e.getKey().equals("hbase.master.balancer.stochastic.regionCountCost"))
        .map(e -> e.getKey() + "=" + e.getValue())
        .toList();
  }

  static final String CACHE_AWARE =
      "org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer";
  static final String MASTER_REF = "  masterRef:\n    name: master\n";

  /**
   * An HMaster StatefulSet "master" that mounts the base hbase-site, as charts/hbase's does; no
   * pods (the operator never restarts the master itself: its own update strategy would).
   */
  void masterStatefulSet() {
    client
        .resource(
            new io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder()
                .withNewMetadata()
                .withName("master")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withReplicas(1)
                .withServiceName("master")
                .withNewSelector()
                .addToMatchLabels("app", "master")
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", "master")
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("master")
                .withImage("hbase")
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
                .endSpec()
                .build())
        .create();
  }

  /** The ConfigMap the master's config volume mounts now. */
  String masterVolume() {
    return client
        .apps()
        .statefulSets()
        .inNamespace(ns)
        .withName("master")
        .get()
        .getSpec()
        .getTemplate()
        .getSpec()
        .getVolumes()
        .stream()
        .filter(v -> v.getName().equals("config"))
        .findFirst()
        .orElseThrow()
        .getConfigMap()
        .getName();
  }

  /** The hbase-site.xml of the policy's derived master ConfigMap now (empty: none). */
  Map<String, String> masterSite(String policy) {
    ConfigMap cm = client.configMaps().inNamespace(ns).withName(policy + "-master-site").get();
    return cm == null ? Map.of() : SiteXml.parse(cm.getData().get("hbase-site.xml"));
  }

  /**
   * Every hbase-site.xml the policy's derived master ConfigMap holds from now on, as the API
   * server's watch shows each version of it.
   */
  List<Map<String, String>> masterSites(String policy) {
    List<Map<String, String>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    var watch =
        client
            .configMaps()
            .inNamespace(ns)
            .withName(policy + "-master-site")
            .watch(
                new io.fabric8.kubernetes.client.Watcher<ConfigMap>() {
                  @Override
                  public void eventReceived(Action action, ConfigMap cm) {
                    if (cm.getData() != null && cm.getData().get("hbase-site.xml") != null) {
                      seen.add(SiteXml.parse(cm.getData().get("hbase-site.xml")));
                    }
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException e) {}
                });
    closeAfter.add(watch::close);
    return seen;
  }

  /**
   * For each time the watch shows the master StatefulSet newly pointed at the policy's derived
   * ConfigMap: whether that ConfigMap held the CacheAwareLoadBalancer then (the operator writes it
   * before it points the master at it).
   */
  List<Boolean> masterPointings(String policy) {
    List<Boolean> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicReference<String> last = new AtomicReference<>("hbase-site");
    var watch =
        client
            .apps()
            .statefulSets()
            .inNamespace(ns)
            .withName("master")
            .watch(
                new io.fabric8.kubernetes.client.Watcher<StatefulSet>() {
                  @Override
                  public void eventReceived(Action action, StatefulSet sts) {
                    String now =
                        sts.getSpec().getTemplate().getSpec().getVolumes().stream()
                            .filter(v -> v.getName().equals("config"))
                            .map(v -> v.getConfigMap().getName())
                            .findFirst()
                            .orElse(null);
                    if (!Objects.equals(now, last.getAndSet(now))
                        && (policy + "-master-site").equals(now)) {
                      seen.add(
                          CACHE_AWARE.equals(
                              masterSite(policy).get("hbase.master.loadbalancer.class")));
                    }
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException e) {}
                });
    closeAfter.add(watch::close);
    return seen;
  }
}
