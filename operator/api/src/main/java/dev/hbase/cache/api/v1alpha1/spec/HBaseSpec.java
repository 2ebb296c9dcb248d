package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.ValidationRule;
import lombok.Data;
import lombok.experimental.Accessors;

/** How the operator reaches HBase. Unset: read from the base hbase-site.xml. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HBaseSpec {
  /** The lines the operator is tested on (make test-hbase, HBASE_VERSION). */
  public static final String VERSION_RULE = "^2\\.[56](\\.[0-9]+)?(-[A-Za-z0-9.]+)?$";

  @ValidationRule(
      value = "self.matches('^2\\\\.[56](\\\\.[0-9]+)?(-[A-Za-z0-9.]+)?$')",
      message =
          "hbase.version must name an HBase 2.5 or 2.6 release (2.5, 2.6, 2.5.13, 2.6.4-hadoop3):"
              + " the lines this operator is tested on")
  @JsonPropertyDescription(
      "The HBase release the cluster runs: 2.5 or 2.6, or a release of them (2.5.13). The planner"
          + " writes only keys that line knows and refuses what it cannot do (PersistentFile needs"
          + " 2.6: 2.5's cache does not survive a restart). Default: 2.6. The operator compares it"
          + " with the version the HMaster reports (event HBaseVersionMismatch).")
  private String version;

  @JsonPropertyDescription(
      "hbase.zookeeper.quorum, e.g. zk-0.zk:2181. Default: from hbase-site.xml.")
  private String zookeeperQuorum;

  @ValidationRule(
      value = "self.startsWith('/')",
      message = "hbase.zookeeperZnodeParent must be an absolute znode path, e.g. /hbase")
  @JsonPropertyDescription("zookeeper.znode.parent. Default: from hbase-site.xml, else /hbase.")
  private String zookeeperZnodeParent;

  @Default("16030")
  @Min(1)
  @Max(65535)
  @JsonPropertyDescription("RegionServer info (HTTP) port serving /jmx. Default 16030.")
  private Integer infoPort;

  @JsonPropertyDescription(
      "A Kerberos-secured cluster: the identity the operator logs in as. Unset: the operator"
          + " connects without Kerberos. How the cluster is secured (hbase.security.authentication,"
          + " hbase.rpc.protection, the servers' principals) is read from the base hbase-site.")
  private KerberosSpec kerberos;

  @JsonPropertyDescription(
      "The info servers serve /jmx over HTTPS (hbase.ssl.enabled): the CA to trust. Required when"
          + " the base hbase-site sets hbase.ssl.enabled=true; unset: plain HTTP to each pod's IP.")
  private TlsSpec tls;
}
