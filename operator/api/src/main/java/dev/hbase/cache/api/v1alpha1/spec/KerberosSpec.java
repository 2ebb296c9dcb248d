package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * The Kerberos identity the operator acts as towards this policy's HBase: a principal and the
 * Secret of the policy's namespace that holds its keytab.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KerberosSpec {
  /** The annotation on the keytab Secret that names the policies allowed to use it. */
  public static final String ALLOWED_POLICIES_ANNOTATION = "cache.hbase.dev/allowed-policies";

  /** The annotation on the keytab Secret that names the one principal the operator may use. */
  public static final String PRINCIPAL_ANNOTATION = "cache.hbase.dev/principal";

  @Required
  @Pattern("^[^/@\\s]+(/[^/@\\s]+)?@[^/@\\s]+$")
  @JsonPropertyDescription(
      "The principal the operator logs in as for this policy's HBase, e.g."
          + " hbase-cache-team-a@EXAMPLE.COM; the keytab Secret's annotation"
          + " cache.hbase.dev/principal must name the same. It needs HBase's READ and ADMIN permissions"
          + " (grant RA: the cluster's state; drain, reload, balancer switch) on this policy's cluster, and"
          + " should have them on no"
          + " other. The realm is looked up in the operator's krb5.conf (chart value"
          + " kerberos.krb5ConfigMap).")
  private String principal;

  @Required
  @Pattern(TargetRef.DNS1123_SUBDOMAIN)
  @JsonPropertyDescription(
      "A Secret in the policy's namespace holding the principal's keytab. It must carry the"
          + " annotation cache.hbase.dev/allowed-policies naming this policy (a comma-separated"
          + " list), and the operator must be allowed to read it: a Role of this namespace granting"
          + " get on this Secret, bound to the operator's service account.")
  private String keytabSecret;

  @Default("keytab")
  @Pattern("^[-._a-zA-Z0-9]+$")
  @JsonPropertyDescription("The key of the keytab in the Secret. Default keytab.")
  private String keytabKey;
}
