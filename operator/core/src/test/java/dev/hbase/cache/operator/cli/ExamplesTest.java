package dev.hbase.cache.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.KerberosSpec;
import dev.hbase.cache.api.v1alpha1.spec.MasterRef;
import dev.hbase.cache.api.v1alpha1.spec.TlsSpec;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Sizes;
import dev.hbase.cache.operator.render.Desired;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every example plans for the demo chart's RegionServers, through the same code as `plan`; the
 * examples with more than a policy (a keytab Secret and its Role, a CA ConfigMap, a StatefulSet)
 * agree with their policies the way the operator checks them.
 */
class ExamplesTest {
  static final Path ROOT = Path.of("../..");

  /** Every example that holds a BlockCachePolicy; statefulset.yaml holds none (it takes them). */
  static final List<String> POLICIES =
      List.of(
          "lru.yaml",
          "offheap.yaml",
          "file.yaml",
          "persistent-file.yaml",
          "meta-only.yaml",
          "file-pvc.yaml",
          "master-deployment.yaml",
          "kerberos.yaml",
          "https-info-servers.yaml");

  static final KubernetesSerialization K8S = new KubernetesSerialization();

  /** The documents of an example file, by kind (one of each kind here). */
  static Map<String, JsonNode> documents(String file) throws Exception {
    Map<String, JsonNode> byKind = new LinkedHashMap<>();
    for (JsonNode d :
        new ObjectMapper(new YAMLFactory())
            .readerFor(JsonNode.class)
            .<JsonNode>readValues(ROOT.resolve("examples").resolve(file).toFile())
            .readAll()) {
      assertThat(byKind.put(d.path("kind").asText(), d))
          .as("two %s in %s", d.path("kind"), file)
          .isNull();
    }
    return byKind;
  }

  static <T> T document(String file, String kind, Class<T> type) throws Exception {
    JsonNode d = documents(file).get(kind);
    assertThat(d).as("a %s in examples/%s", kind, file).isNotNull();
    return K8S.convertValue(d, type);
  }

  static Plan planned(String file, long limit) throws Exception {
    PlanResult r =
        PlanCommand.plan(Files.readString(ROOT.resolve("examples").resolve(file)), limit, limit);
    assertThat(r).as("%s at %s bytes: %s", file, limit, r).isInstanceOf(Plan.class);
    return (Plan) r;
  }

  @org.junit.jupiter.api.Test
  void everyExampleIsChecked() throws Exception {
    try (var files = Files.list(ROOT.resolve("examples"))) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .containsExactlyInAnyOrderElementsOf(
              java.util.stream.Stream.concat(
                      POLICIES.stream(), java.util.stream.Stream.of("statefulset.yaml"))
                  .toList());
    }
  }

  static long chartRegionServerLimit() throws Exception {
    JsonNode v =
        new ObjectMapper(new YAMLFactory())
            .readTree(ROOT.resolve("charts/hbase/values.yaml").toFile());
    return Sizes.parse(v.at("/regionserver/resources/limits/memory").asText());
  }

  /** The HBase release of the demo chart (its image tag), as its HMaster reports it. */
  static String chartHBaseVersion() throws Exception {
    return new ObjectMapper(new YAMLFactory())
        .readTree(ROOT.resolve("charts/hbase/values.yaml").toFile())
        .at("/image/tag")
        .asText();
  }

  /** Planned as the operator plans on the demo chart once its HMaster has reported its version. */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.FieldSource("POLICIES")
  void examplePlansForTheDemoChart(String file) throws Exception {
    String yaml = Files.readString(ROOT.resolve("examples").resolve(file));
    PlanResult r =
        PlanCommand.plan(
            yaml, chartRegionServerLimit(), chartRegionServerLimit(), chartHBaseVersion());
    assertThat(r).as("%s at the chart's RegionServer limit: %s", file, r).isInstanceOf(Plan.class);
    // the only advice allowed is the tmpfs notice of the File example
    assertThat(((Plan) r).warnings()).allMatch(w -> w.startsWith("storage.medium Memory"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"4Gi", "16Gi", "64Gi"})
  void commandPrintsPlansAndRefusals(String limit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of(
                "-f",
                ROOT.resolve("examples/persistent-file.yaml").toString(),
                "--memory-limit",
                limit),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).isEqualTo(PlanCommand.OK);
    assertThat(out.toString())
        .contains(
            "heap: ",
            "directMemory: ",
            "pvcSize: 2Gi",
            "configHash: ",
            "env:",
            "HBASE_HEAPSIZE: ",
            "regionServerSite:",
            "hbase.bucketcache.persistent.path: ",
            "masterSite:",
            // spec.hbase.version unset, no --master-version: as the operator before it has seen
            // the HMaster's version, no key only 2.6 has, and a warning that says so
            "the master keys only HBase 2.6 has");
    assertThat(out.toString()).doesNotContain("hbase.master.loadbalancer.class:");
    assertThat(err.toString()).isEmpty();

    out.reset();
    rc =
        PlanCommand.run(
            List.of(
                "-f",
                ROOT.resolve("examples/persistent-file.yaml").toString(),
                "--memory-limit",
                limit,
                "--master-version",
                "2.6.4"),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).isEqualTo(PlanCommand.OK);
    assertThat(out.toString())
        .contains(
            "hbase.master.loadbalancer.class:"
                + " org.apache.hadoop.hbase.master.balancer.CacheAwareLoadBalancer")
        .doesNotContain("the master keys only HBase 2.6 has");
  }

  /**
   * {@code -f -}: the policy on standard input, as {@code kubectl run -i --image=<the published
   * image> -- plan -f - ...} passes it (no checkout, no file in the image).
   */
  @org.junit.jupiter.api.Test
  void planReadsThePolicyFromStandardInput() throws Exception {
    byte[] policy = Files.readAllBytes(ROOT.resolve("examples/persistent-file.yaml"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of("-f", "-", "--memory-limit", "16Gi"),
            new java.io.ByteArrayInputStream(policy),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).as("stderr: %s", err).isEqualTo(PlanCommand.OK);
    ByteArrayOutputStream fromFile = new ByteArrayOutputStream();
    PlanCommand.run(
        List.of(
            "-f",
            ROOT.resolve("examples/persistent-file.yaml").toString(),
            "--memory-limit",
            "16Gi"),
        new PrintStream(fromFile),
        new PrintStream(new ByteArrayOutputStream()));
    assertThat(out.toString()).contains("heap: ", "pvcSize: 2Gi").isEqualTo(fromFile.toString());
    // a policy the planner refuses, from standard input too
    ByteArrayOutputStream refused = new ByteArrayOutputStream();
    assertThat(
            PlanCommand.run(
                List.of("-f", "-", "--memory-limit", "1Gi"),
                new java.io.ByteArrayInputStream(policy),
                new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(refused)))
        .isEqualTo(PlanCommand.REFUSED);
    assertThat(refused.toString()).startsWith("refused:");
  }

  /**
   * kerberos.yaml: the Secret names the policy's principal and allows the policy (the checks of
   * CredentialsStep), holds the keytab key, and its Role grants exactly get on that Secret to the
   * chart's service account.
   */
  @org.junit.jupiter.api.Test
  void kerberosExampleHasItsSecretAnnotationsAndRole() throws Exception {
    BlockCachePolicy p = document("kerberos.yaml", "BlockCachePolicy", BlockCachePolicy.class);
    KerberosSpec k = p.getSpec().getHbase().getKerberos();
    Secret secret = document("kerberos.yaml", "Secret", Secret.class);
    assertThat(secret.getMetadata().getName()).isEqualTo(k.getKeytabSecret());
    assertThat(secret.getMetadata().getAnnotations())
        .containsEntry(KerberosSpec.PRINCIPAL_ANNOTATION, k.getPrincipal());
    assertThat(
            List.of(
                secret
                    .getMetadata()
                    .getAnnotations()
                    .get(KerberosSpec.ALLOWED_POLICIES_ANNOTATION)
                    .split(",")))
        .extracting(String::strip)
        .contains(p.getMetadata().getName());
    assertThat(secret.getData())
        .containsKey(k.getKeytabKey() == null ? "keytab" : k.getKeytabKey());
    Role role = document("kerberos.yaml", "Role", Role.class);
    assertThat(role.getRules()).hasSize(1);
    PolicyRule rule = role.getRules().get(0);
    assertThat(rule.getApiGroups()).containsExactly("");
    assertThat(rule.getResources()).containsExactly("secrets");
    assertThat(rule.getVerbs()).containsExactly("get");
    assertThat(rule.getResourceNames()).containsExactly(k.getKeytabSecret());
    RoleBinding binding = document("kerberos.yaml", "RoleBinding", RoleBinding.class);
    assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    // the operator chart's service account, release hbase-cache-operator (the README's install)
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo("hbase-cache-operator");
              assertThat(s.getNamespace()).isEqualTo("hbase-cache-system");
            });
  }

  /** https-info-servers.yaml: the CA ConfigMap is the one the policy names, with a PEM block. */
  @org.junit.jupiter.api.Test
  void httpsExampleNamesItsCaConfigMap() throws Exception {
    BlockCachePolicy p =
        document("https-info-servers.yaml", "BlockCachePolicy", BlockCachePolicy.class);
    TlsSpec tls = p.getSpec().getHbase().getTls();
    ConfigMap ca = document("https-info-servers.yaml", "ConfigMap", ConfigMap.class);
    assertThat(ca.getMetadata().getName()).isEqualTo(tls.getCaConfigMap());
    assertThat(ca.getData().get(tls.getCaKey() == null ? "ca.crt" : tls.getCaKey()))
        .contains("-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----");
  }

  /** file-pvc.yaml: a file L2 on a PVC per RegionServer (not tmpfs), of the size asked for. */
  @org.junit.jupiter.api.Test
  void fileOnAPvcGetsAClaimTemplate() throws Exception {
    Plan plan = planned("file-pvc.yaml", chartRegionServerLimit());
    assertThat(plan.mode()).isEqualTo(CacheMode.File);
    assertThat(plan.volume()).isNotNull();
    assertThat(plan.volume().memory()).isFalse();
    assertThat(plan.persistentPath()).isNull();
    assertThat(Desired.claimTemplate(plan).getSpec().getResources().getRequests().get("storage"))
        .isEqualTo(new Quantity("3Gi"));
    // the L2 is on the PVC: it takes no direct memory of the pod
    assertThat(plan.bucketCache()).isEqualTo(Sizes.parse("1536Mi"));
    assertThat(plan.directMemory()).isLessThan(plan.bucketCache());
  }

  /**
   * master-deployment.yaml: a masterRef of kind Deployment gets the master keys; those only 2.6 has
   * once the HMaster has reported 2.6 (the example leaves spec.hbase.version unset).
   */
  @org.junit.jupiter.api.Test
  void masterRefMayBeADeployment() throws Exception {
    BlockCachePolicy p =
        document("master-deployment.yaml", "BlockCachePolicy", BlockCachePolicy.class);
    assertThat(p.getSpec().getMasterRef().getKind()).isEqualTo(MasterRef.Kind.Deployment);
    assertThat(planned("master-deployment.yaml", chartRegionServerLimit()).masterSite())
        .containsKey("hbase.assignment.dispatch.wait.msec")
        .doesNotContainKey("hbase.master.loadbalancer.class");
    long limit = chartRegionServerLimit();
    PlanResult seen =
        PlanCommand.plan(
            Files.readString(ROOT.resolve("examples/master-deployment.yaml")),
            limit,
            limit,
            "2.6.4");
    assertThat(((Plan) seen).masterSite()).containsKey("hbase.master.loadbalancer.class");
  }

  /**
   * statefulset.yaml, a RegionServer StatefulSet outside the demo chart, takes every example policy
   * as the operator reads a target: the container found, with a memory limit the policy plans for,
   * the base ConfigMap mounted as a volume, a readiness probe, the governing Service headless and
   * published before Ready; the operator's StatefulSet patch renders for it.
   */
  @ParameterizedTest
  @org.junit.jupiter.params.provider.FieldSource("POLICIES")
  void theStatefulSetExampleTakesEveryPolicy(String file) throws Exception {
    StatefulSet sts = document("statefulset.yaml", "StatefulSet", StatefulSet.class);
    Service svc = document("statefulset.yaml", "Service", Service.class);
    ConfigMap base = document("statefulset.yaml", "ConfigMap", ConfigMap.class);
    BlockCachePolicy p = document(file, "BlockCachePolicy", BlockCachePolicy.class);
    p.getMetadata().setNamespace("team-a");
    assertThat(p.getSpec().getTargetRef().getName()).isEqualTo(sts.getMetadata().getName());
    assertThat(p.getSpec().getHbaseSiteConfigMap()).isEqualTo(base.getMetadata().getName());
    assertThat(base.getData()).containsKey(Desired.SITE_FILE);
    assertThat(sts.getSpec().getServiceName()).isEqualTo(svc.getMetadata().getName());
    assertThat(svc.getSpec().getClusterIP()).isEqualTo("None");
    assertThat(svc.getSpec().getPublishNotReadyAddresses()).isTrue();
    PodSpec pod = sts.getSpec().getTemplate().getSpec();
    Container rs = Desired.container(pod, p.getSpec().getTargetRef().getContainer()).orElseThrow();
    assertThat(rs.getReadinessProbe()).as("a readiness probe that means serving").isNotNull();
    Quantity limit = rs.getResources().getLimits().get("memory");
    assertThat(limit).as("the RegionServer container's memory limit").isNotNull();
    String volume =
        Desired.configVolume(pod, n -> n.equals(p.getSpec().getHbaseSiteConfigMap())).orElseThrow();
    long bytes = Quantity.getAmountInBytes(limit).longValueExact();
    PlanResult r =
        PlanCommand.plan(Files.readString(ROOT.resolve("examples").resolve(file)), bytes, bytes);
    assertThat(r)
        .as("%s at the StatefulSet's limit %s: %s", file, limit, r)
        .isInstanceOf(Plan.class);
    StatefulSet patch =
        Desired.regionServerPatch(p, (Plan) r, "rev", rs, volume, pod.getSecurityContext());
    assertThat(patch.getMetadata().getName()).isEqualTo(sts.getMetadata().getName());
    assertThat(patch.getSpec().getTemplate().getSpec().getVolumes())
        .anySatisfy(
            v ->
                assertThat(v.getConfigMap().getName())
                    .isEqualTo(Desired.regionServerConfigMapName(p)));
    // the operator's cache volume may not lie under one of the container's own mounts
    if (((Plan) r).volume() != null) {
      String cache = ((Plan) r).volume().mountPath();
      assertThat(rs.getVolumeMounts())
          .noneSatisfy(m -> assertThat(cache + "/").startsWith(m.getMountPath() + "/"));
    }
  }

  @org.junit.jupiter.api.Test
  void refusalExitsTwoWithReasonsAndUsageErrorsSixtyFour() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of(
                "-f",
                ROOT.resolve("examples/persistent-file.yaml").toString(),
                "--memory-limit",
                "1Gi"),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).isEqualTo(PlanCommand.REFUSED);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString()).startsWith("refused:").contains("memory limit 1Gi leaves only");
    assertThat(
            PlanCommand.run(
                List.of("--memory-limit", "1Gi"), new PrintStream(out), new PrintStream(err)))
        .isEqualTo(PlanCommand.USAGE);
    assertThat(
            PlanCommand.run(
                List.of("-f", "x.yaml", "--memory-limit", "lots"),
                new PrintStream(out),
                new PrintStream(err)))
        .isEqualTo(PlanCommand.USAGE);
  }
}
