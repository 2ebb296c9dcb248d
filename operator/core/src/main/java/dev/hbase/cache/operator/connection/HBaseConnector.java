package dev.hbase.cache.operator.connection;

import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import java.util.Map;

/** Opens an admin connection to one HBase cluster: {@code AdminHBaseCluster} in production. */
@FunctionalInterface
public interface HBaseConnector {
  /**
   * @param clientSettings hbase-site keys for the client: the base hbase-site's, with spec.hbase's
   *     quorum and znode parent over them (see {@link HBaseClusters#clientSettings})
   * @param login the Kerberos identity to connect as (spec.hbase.kerberos), null for none
   */
  HBaseCluster connect(Map<String, String> clientSettings, KerberosLogin login);
}
