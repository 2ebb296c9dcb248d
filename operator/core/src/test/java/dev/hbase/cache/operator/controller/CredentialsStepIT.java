package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.KerberosSpec;
import dev.hbase.cache.operator.connection.KerberosIdentities;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The keytab Secret as the operator's own service account reads it, on a real API server with RBAC:
 * without a grant in the policy's namespace the step says KeytabSecretForbidden; with the README's
 * grant (a Role with get on that one Secret, bound to the service account) it reads that Secret,
 * and still not another one of the namespace.
 */
@EnableKubeAPIServer
class CredentialsStepIT {

  static KubernetesClient client;

  static final String NS = "team-a";
  static final String SA = "hbase-cache-operator";

  @Test
  void theOperatorReadsOnlyTheKeytabSecretItWasGranted() {
    client
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    for (String name : new String[] {"hbase-cache-keytab", "other-keytab"}) {
      client
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .withNamespace(NS)
                  .withAnnotations(
                      Map.of(
                          KerberosSpec.ALLOWED_POLICIES_ANNOTATION,
                          "secured",
                          KerberosSpec.PRINCIPAL_ANNOTATION,
                          "hbase-cache@EXAMPLE.COM"))
                  .endMetadata()
                  .withData(
                      Map.of(
                          "keytab", Base64.getEncoder().encodeToString("not a keytab".getBytes())))
                  .build())
          .create();
    }
    KubernetesClient asOperator =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder(client.getConfiguration())
                    .withImpersonateUsername("system:serviceaccount:hbase-cache-system:" + SA)
                    .withImpersonateGroups("system:serviceaccounts", "system:authenticated")
                    .build())
            .build();
    CredentialsStep step = new CredentialsStep(new KerberosIdentities());

    assertThat(step.resolve(context(asOperator, "hbase-cache-keytab")))
        .as("no grant")
        .isInstanceOfSatisfying(
            CredentialsStep.Refused.class,
            r -> {
              assertThat(r.reason()).isEqualTo(Reason.KeytabSecretForbidden);
              assertThat(r.message()).contains(NS + "/hbase-cache-keytab").contains("Role");
            });

    // the README's grant: get on that one Secret
    client
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName("hbase-cache-keytab")
                .withNamespace(NS)
                .endMetadata()
                .addNewRule()
                .withApiGroups("")
                .withResources("secrets")
                .withResourceNames("hbase-cache-keytab")
                .withVerbs("get")
                .endRule()
                .build())
        .create();
    client
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName("hbase-cache-keytab")
                .withNamespace(NS)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", "hbase-cache-keytab")
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(SA)
                .withNamespace("hbase-cache-system")
                .endSubject()
                .build())
        .create();
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(step.resolve(context(asOperator, "hbase-cache-keytab")))
                    .as("granted: the Secret is read, and its bytes are no keytab")
                    .isInstanceOfSatisfying(
                        CredentialsStep.Refused.class,
                        r -> assertThat(r.reason()).isEqualTo(Reason.KerberosLoginFailed)));
    assertThat(step.resolve(context(asOperator, "other-keytab")))
        .as("another Secret of the namespace")
        .isInstanceOfSatisfying(
            CredentialsStep.Refused.class,
            r -> assertThat(r.reason()).isEqualTo(Reason.KeytabSecretForbidden));
  }

  static PolicyContext context(KubernetesClient as, String secret) {
    BlockCachePolicy p = new BlockCachePolicy();
    p.getMetadata().setName("secured");
    p.getMetadata().setNamespace(NS);
    p.setSpec(
        new BlockCachePolicySpec()
            .setHbase(
                new HBaseSpec()
                    .setKerberos(
                        new KerberosSpec()
                            .setPrincipal("hbase-cache@EXAMPLE.COM")
                            .setKeytabSecret(secret))));
    return new PolicyContext(p, as, null, Instant.now());
  }
}
