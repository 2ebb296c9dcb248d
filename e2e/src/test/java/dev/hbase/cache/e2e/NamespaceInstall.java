package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Issue 25 on kind: the operator chart in namespace-only mode, installed by a user who holds only
 * the {@code admin} ClusterRole in the HBase namespace (helm as that user through impersonation). A
 * cluster admin first installs what such an install needs from the cluster (scope Prerequisites:
 * the CRD and the roles aggregated into view/edit/admin); the suite's cluster-wide operator is
 * uninstalled.
 */
final class NamespaceInstall {
  static final String ADMIN = "e2e-team-admin";
  static final String PREREQUISITES = "hco-prerequisites";
  static final String RELEASE = "hco-team";
  static final String UNWATCHED = "e2e-unwatched";

  final KubernetesClient client;
  final Cluster cluster;
  final Settings settings;
  final Report report;

  NamespaceInstall(KubernetesClient client, Cluster cluster, Settings settings, Report report) {
    this.client = client;
    this.cluster = cluster;
    this.settings = settings;
    this.report = report;
  }

  Shell.Result helm(String args) {
    return cluster.helm(600, args);
  }

  /**
   * The cluster-wide operator out (its log saved to {@code operatorLog}), the namespace-scoped one
   * in.
   */
  void replaceTheClusterWideOperator(Path operatorLog) throws Exception {
    String log = KindScenario.safe(cluster::operatorLogs);
    long forbidden = 0;
    if (log != null) {
      Files.writeString(operatorLog, log);
      forbidden = log.lines().filter(l -> l.toLowerCase().contains("forbidden")).count();
    }
    Shell.Result un =
        helm(
            "uninstall "
                + settings.operatorRelease()
                + " -n "
                + settings.operatorNamespace()
                + " --wait --timeout 3m");
    assertThat(un.code())
        .as("helm uninstall of the cluster-wide operator: %s", un.output())
        .isZero();
    report.line(
        "- the suite's cluster-wide operator uninstalled (its log saved to %s: %s lines, %d mention `forbidden`)",
        operatorLog.getFileName(), log == null ? "no" : "" + log.lines().count(), forbidden);

    // the cluster admin: the CRD is there (step 1: the cluster-wide release made it and uninstall
    // kept it, helm.sh/resource-policy: keep; it stays that release's, so this one must not render
    // it: crds.create=false); the aggregated roles a namespace install needs
    Shell.Result pre =
        helm(
            "upgrade --install "
                + PREREQUISITES
                + " charts/hbase-cache-operator -n "
                + settings.operatorNamespace()
                + " --set crds.create=false --set scope=Prerequisites --wait");
    assertThat(pre.code()).as("helm install scope=Prerequisites: %s", pre.output()).isZero();
    client
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(ADMIN)
                .withNamespace(cluster.ns)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName("admin")
                .endRoleRef()
                .addNewSubject()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("User")
                .withName(ADMIN)
                .endSubject()
                .build())
        .serverSideApply();
    for (String[] q :
        List.of(
            new String[] {"create", "clusterroles"},
            new String[] {"create", "roles"},
            new String[] {"list", "pods", "--all-namespaces"},
            new String[] {"patch", "blockcachepolicies.cache.hbase.dev/status"})) {
      List<String> cmd =
          new java.util.ArrayList<>(List.of("auth", "can-i", "--as", ADMIN, "-n", cluster.ns));
      cmd.addAll(List.of(q));
      String answer = cluster.kubectl(cmd.toArray(String[]::new)).output().strip();
      report.line(
          "  - `kubectl auth can-i --as %s -n %s %s`: %s",
          ADMIN, cluster.ns, String.join(" ", q), answer.lines().reduce((a, b) -> b).orElse(""));
    }
    String clusterRoles =
        cluster.kubectl("auth", "can-i", "--as", ADMIN, "create", "clusterroles").output();
    assertThat(clusterRoles.strip().lines().reduce((a, b) -> b).orElse(""))
        .as(
            "the namespace admin may create no ClusterRole (kubectl auth can-i said: %s)",
            clusterRoles)
        .isEqualTo("no");

    // the namespace admin: the operator with Roles only, in the HBase namespace, watching it
    String image = settings.operatorImage();
    Shell.Result in =
        helm(
            "upgrade --install "
                + RELEASE
                + " charts/hbase-cache-operator -n "
                + cluster.ns
                + " --kube-as-user "
                + ADMIN
                + " --set scope=Namespace --set image.repository="
                + image.substring(0, image.lastIndexOf(':'))
                + " --set image.tag="
                + image.substring(image.lastIndexOf(':') + 1)
                + " --wait --timeout 5m");
    assertThat(in.code()).as("helm install scope=Namespace as %s: %s", ADMIN, in.output()).isZero();
    cluster.opNs = cluster.ns;
    cluster.opRelease = RELEASE;
    Shell.Result objects =
        cluster.kubectl(
            "get",
            "clusterroles,clusterrolebindings",
            "-l",
            "app.kubernetes.io/instance=" + RELEASE,
            "-o",
            "name");
    assertThat(objects.output().strip())
        .as("cluster-scoped objects of release %s", RELEASE)
        .isEmpty();
    report.line(
        "- `helm install %s --kube-as-user %s -n %s --set scope=Namespace`: Ready, operator pod `%s`, no cluster-scoped object",
        RELEASE, ADMIN, cluster.ns, cluster.operatorPod().getMetadata().getName());
  }

  /** A policy in a namespace the operator does not watch, of the same shape as the suite's. */
  void createUnwatchedPolicy(BlockCachePolicy like) {
    client
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(UNWATCHED).endMetadata().build())
        .serverSideApply();
    BlockCachePolicy p = io.fabric8.kubernetes.client.utils.Serialization.clone(like);
    p.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName("left-alone")
            .withNamespace(UNWATCHED)
            .build());
    p.setStatus(null);
    client.resource(p).create();
  }

  void assertUnwatchedPolicyLeftAlone() {
    BlockCachePolicy p =
        client
            .resources(BlockCachePolicy.class)
            .inNamespace(UNWATCHED)
            .withName("left-alone")
            .get();
    assertThat(p).isNotNull();
    assertThat(p.getStatus())
        .as(
            "status of a policy in %s, which the namespace-scoped operator does not watch",
            UNWATCHED)
        .isNull();
    assertThat(p.getMetadata().getFinalizers()).as("finalizers of that policy").isNullOrEmpty();
    assertThat(client.v1().events().inNamespace(UNWATCHED).list().getItems())
        .as("events in %s", UNWATCHED)
        .isEmpty();
    report.line("- policy `%s/left-alone`: no status, no finalizer, no event", UNWATCHED);
  }

  /**
   * Waits until the namespace-scoped operator has taken the policy (a status of this generation).
   */
  static void awaitTaken(Cluster cluster, Duration atMost) {
    await("the namespace-scoped operator writes the policy's status")
        .atMost(atMost)
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () -> {
              BlockCachePolicy p = cluster.policyOrNull();
              return p != null
                  && p.getStatus() != null
                  && p.getStatus().getObservedGeneration() != null;
            });
  }
}
