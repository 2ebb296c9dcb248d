package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * The RegionServers' info servers serve /jmx over HTTPS: the CA their certificates chain to, from a
 * ConfigMap of the policy's namespace (a CA certificate is public: no Secret needed).
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TlsSpec {
  @Required
  @Pattern(TargetRef.DNS1123_SUBDOMAIN)
  @JsonPropertyDescription(
      "A ConfigMap in the policy's namespace holding the PEM certificate(s) of the CA the info"
          + " servers' certificates chain to (a trust-manager bundle, or a cert-manager CA's ca.crt"
          + " copied into one). The operator trusts exactly these for this policy, connects to each"
          + " pod's IP and accepts its server only if the certificate carries the pod's DNS name"
          + " <pod>.<serviceName>.<namespace>.svc.<clusterDomain> (the StatefulSet's serviceName; the"
          + " chart's clusterDomain). With hbase.security.authentication.ui=kerberos in the base"
          + " hbase-site it authenticates with SPNEGO as spec.hbase.kerberos.principal.")
  private String caConfigMap;

  @Default("ca.crt")
  @Pattern("^[-._a-zA-Z0-9]+$")
  @JsonPropertyDescription("The key of the PEM text in the ConfigMap. Default ca.crt.")
  private String caKey;
}
