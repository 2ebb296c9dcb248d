package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.KerberosSpec;
import dev.hbase.cache.operator.connection.KerberosIdentities;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;

/**
 * The identity the operator acts as towards the policy's HBase: none for an unsecured cluster, or
 * the Kerberos login of spec.hbase.kerberos from its keytab Secret. The operator is a deputy here:
 * it reads only the Secret the policy names, only in the policy's namespace, only where that
 * namespace lets it (the chart grants no access to Secrets: the namespace's owner grants get on
 * that one Secret with a Role and RoleBinding), and uses it only for a policy the Secret's own
 * annotation {@value KerberosSpec#ALLOWED_POLICIES_ANNOTATION} names: who may write a policy but
 * not read the Secret cannot make the operator act as the identity it holds. Each refusal has its
 * reason, and the reconcile then sends nothing to HBase and restarts no pod.
 */
final class CredentialsStep {

  sealed interface Result permits Unsecured, Identity, Refused {}

  /** No spec.hbase.kerberos: the operator connects without Kerberos. */
  record Unsecured() implements Result {}

  /** Logged in as spec.hbase.kerberos.principal. */
  record Identity(KerberosLogin login) implements Result {}

  /** No identity: the reason and message say why; the reconcile goes no further than HBase. */
  record Refused(Reason reason, String message) implements Result {}

  private final KerberosIdentities identities;

  CredentialsStep(KerberosIdentities identities) {
    this.identities = identities;
  }

  /** The login the result carries, null for none. */
  static KerberosLogin login(Result r) {
    return r instanceof Identity i ? i.login() : null;
  }

  Result resolve(PolicyContext c) {
    BlockCachePolicy policy = c.policy();
    var hbase = policy.getSpec().getHbase();
    KerberosSpec k = hbase == null ? null : hbase.getKerberos();
    if (k == null) {
      return new Unsecured();
    }
    String owner = c.namespace() + "/" + k.getKeytabSecret();
    Result r = resolve(c, k, owner, "Secret " + owner);
    if (r instanceof Refused x
        && (x.reason() == Reason.KeytabSecretNotFound
            || x.reason() == Reason.KeytabSecretForbidden)) {
      // the Secret gone or no longer readable: its login goes too (one that another policy may
      // not use stays for the policies that may)
      identities.forget(owner);
    }
    return r;
  }

  private Result resolve(PolicyContext c, KerberosSpec k, String owner, String where) {
    BlockCachePolicy policy = c.policy();
    String ns = c.namespace();
    Secret secret;
    try {
      secret = c.client().secrets().inNamespace(ns).withName(k.getKeytabSecret()).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        return new Refused(
            Reason.KeytabSecretForbidden,
            "the operator may not read "
                + where
                + ": grant its service account get on that Secret in "
                + ns
                + " (a Role and RoleBinding; README, Secured clusters)");
      }
      throw e;
    }
    if (secret == null) {
      return new Refused(Reason.KeytabSecretNotFound, where + " (spec.hbase.kerberos) not found");
    }
    String policyName = policy.getMetadata().getName();
    if (!allowed(secret, policyName)) {
      return new Refused(
          Reason.KeytabSecretNotAllowed,
          where
              + " does not name policy "
              + policyName
              + " in its annotation "
              + KerberosSpec.ALLOWED_POLICIES_ANNOTATION
              + ": whoever may read the keytab decides which policies the operator uses it for");
    }
    String pinned = annotation(secret, KerberosSpec.PRINCIPAL_ANNOTATION);
    if (!k.getPrincipal().equals(pinned)) {
      return new Refused(
          Reason.KeytabSecretNotAllowed,
          where
              + (pinned == null
                  ? " names no principal in its annotation " + KerberosSpec.PRINCIPAL_ANNOTATION
                  : " allows principal " + pinned + " only, not " + k.getPrincipal())
              + ": a keytab may hold several principals, and its owner says which one the"
              + " operator may use");
    }
    String key = k.getKeytabKey() == null ? "keytab" : k.getKeytabKey();
    String encoded = secret.getData() == null ? null : secret.getData().get(key);
    if (encoded == null || encoded.isEmpty()) {
      return new Refused(Reason.KeytabSecretNotFound, where + " has no key " + key);
    }
    try {
      return new Identity(
          identities.login(owner, k.getPrincipal(), Base64.getDecoder().decode(encoded)));
    } catch (IllegalArgumentException e) {
      return new Refused(Reason.KerberosLoginFailed, where + ": key " + key + " is not base64");
    } catch (HBaseClusterException.LoginFailed e) {
      return new Refused(Reason.KerberosLoginFailed, e.getMessage() + " (" + where + ")");
    }
  }

  private static String annotation(Secret secret, String key) {
    Map<String, String> a = secret.getMetadata().getAnnotations();
    return a == null ? null : a.get(key);
  }

  /** Whether the Secret's annotation lists the policy (comma-separated names). */
  static boolean allowed(Secret secret, String policyName) {
    String names = annotation(secret, KerberosSpec.ALLOWED_POLICIES_ANNOTATION);
    return names != null
        && Arrays.stream(names.split(",")).map(String::strip).anyMatch(policyName::equals);
  }
}
