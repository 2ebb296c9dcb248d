package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.spec.KerberosSpec;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.apache.hadoop.minikdc.MiniKdc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * spec.hbase.kerberos on a real API server, with a real KDC (MiniKdc) for the login: the operator
 * acts as the policy's principal only once the keytab Secret of the policy's namespace is there,
 * names the policy in its annotation and holds a keytab the KDC accepts. Before that, each step has
 * its Degraded reason and Warning event, the rollout is Blocked, no connection to HBase is made and
 * no pod restarts. Then the roll runs, every connection as the principal.
 */
@EnableKubeAPIServer
class SecuredPolicyIT extends OperatorHarness {

  static final String PRINCIPAL = "hbase-cache";
  static final String ROTATED = "hbase-cache-2";
  static MiniKdc kdc;
  static byte[] keytab;
  static byte[] rotatedKeytab;

  @BeforeAll
  static void startKdc() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "kdc-" + System.nanoTime()));
    kdc = new MiniKdc(MiniKdc.createConf(), dir.toFile());
    kdc.start();
    Path file = dir.resolve("operator.keytab");
    kdc.createPrincipal(file.toFile(), PRINCIPAL);
    keytab = Files.readAllBytes(file);
    Path rotated = dir.resolve("rotated.keytab");
    kdc.createPrincipal(rotated.toFile(), ROTATED);
    rotatedKeytab = Files.readAllBytes(rotated);
  }

  @AfterAll
  static void stopKdc() {
    if (kdc != null) {
      kdc.stop();
    }
  }

  static String principal() {
    return PRINCIPAL + "@" + kdc.getRealm();
  }

  @Test
  void theOperatorActsAsThePolicysPrincipalOnlyWithAKeytabItMayUse() {
    cluster("4Gi", false);
    operator(null);
    policy(
        "secured",
        "  mode: MetaOnly\n"
            + "  hbase:\n"
            + "    kerberos:\n"
            + "      principal: "
            + principal()
            + "\n"
            + "      keytabSecret: hbase-cache-keytab\n");

    awaitRefused("KeytabSecretNotFound", "hbase-cache-keytab");

    // the Secret, not naming the policy
    client.resource(secret(Map.of(), keytab)).create();
    nudge("11s");
    awaitRefused("KeytabSecretNotAllowed", KerberosSpec.ALLOWED_POLICIES_ANNOTATION);

    // naming it (among others), but pinning another principal of the keytab
    client
        .resource(
            secret(
                Map.of(
                    KerberosSpec.ALLOWED_POLICIES_ANNOTATION,
                    "other, secured",
                    KerberosSpec.PRINCIPAL_ANNOTATION,
                    "hbase/admin@" + kdc.getRealm()),
                keytab))
        .update();
    nudge("12s");
    awaitRefused("KeytabSecretNotAllowed", "allows principal hbase/admin@");

    // the principal pinned, the bytes no keytab
    client.resource(secret(allowed(), "not a keytab".getBytes())).update();
    nudge("14s");
    awaitRefused("KerberosLoginFailed", principal());
    assertThat(conditionMessage("secured", "Degraded"))
        .as("no keytab path (it names the keytab's digest) in the status")
        .doesNotContain("keytab-");

    // until here: nothing sent to HBase, no pod restarted
    assertThat(hbase.connects).as("connections to HBase before a login").isZero();
    assertThat(kube.deletes).as("pods deleted before a login").isEmpty();

    client.resource(secret(allowed(), keytab)).update();
    nudge("13s");
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("secured"));
    assertThat(kube.deletes).hasSize(3);
    assertThat(hbase.connectedAs).as("the principal of each connection").containsOnly(principal());
    assertThat(reason("secured", "Degraded", "False")).isEqualTo("AsPlanned");

    // the Secret rotated to another principal's keytab, the policy following: the connection
    // made as the old login is closed with it
    assertThat(hbase.closes).as("connections closed before the rotation").isZero();
    client
        .resource(
            secret(
                Map.of(
                    KerberosSpec.ALLOWED_POLICIES_ANNOTATION,
                    "secured",
                    KerberosSpec.PRINCIPAL_ANNOTATION,
                    ROTATED + "@" + kdc.getRealm()),
                rotatedKeytab))
        .update();
    mergePatch(
        "secured",
        "{\"spec\":{\"hbase\":{\"kerberos\":{\"principal\":\""
            + ROTATED
            + "@"
            + kdc.getRealm()
            + "\"}}}}");
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(hbase.closes)
                  .as("the old login's connection closed when the login was replaced")
                  .isEqualTo(1);
              assertThat(reason("secured", "Degraded", "False")).isEqualTo("AsPlanned");
            });
  }

  private void awaitRefused(String reason, String inMessage) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                reason.equals(reason("secured", "Degraded", "True"))
                    && conditionMessage("secured", "Degraded").contains(inMessage));
    assertThat(condition("secured", "Ready", "False")).isTrue();
    assertThat(get("secured").getStatus().getRollout().getPhase().name()).isEqualTo("Blocked");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(e -> "Warning".equals(e.getType()) && reason.equals(e.getReason())));
  }

  /** A change of the policy's spec: a reconcile now (the operator does not watch Secrets). */
  private void nudge(String interval) {
    mergePatch("secured", "{\"spec\":{\"metrics\":{\"interval\":\"" + interval + "\"}}}");
  }

  private static Map<String, String> allowed() {
    return Map.of(
        KerberosSpec.ALLOWED_POLICIES_ANNOTATION,
        "other, secured",
        KerberosSpec.PRINCIPAL_ANNOTATION,
        principal());
  }

  private Secret secret(Map<String, String> annotations, byte[] bytes) {
    return new SecretBuilder()
        .withNewMetadata()
        .withName("hbase-cache-keytab")
        .withNamespace(ns)
        .withAnnotations(annotations)
        .endMetadata()
        .withData(Map.of("keytab", Base64.getEncoder().encodeToString(bytes)))
        .build();
  }
}
