import java.util.HashSet;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.net.Address;
import org.apache.hadoop.hbase.rsgroup.RSGroupAdminClient;

/**
 * Makes a RegionServer group with HBase's own hbase-rsgroup client, run on the server's classpath
 * (java's source-file mode; RSGroupRollIT): the operator's shaded 2.6 client has no call for it.
 *
 * <p>Arguments: zookeeper-quorum client-port group table host:port...
 */
public class RSGroupSetup {
  public static void main(String[] a) throws Exception {
    Configuration c = HBaseConfiguration.create();
    c.set("hbase.zookeeper.quorum", a[0]);
    c.set("hbase.zookeeper.property.clientPort", a[1]);
    try (Connection conn = ConnectionFactory.createConnection(c)) {
      RSGroupAdminClient groups = new RSGroupAdminClient(conn);
      groups.addRSGroup(a[2]);
      Set<Address> servers = new HashSet<>();
      for (int i = 4; i < a.length; i++) {
        servers.add(Address.fromString(a[i]));
      }
      groups.moveServers(servers, a[2]);
      groups.moveTables(Set.of(TableName.valueOf(a[3])), a[2]);
      System.out.println("RSGROUP " + groups.getRSGroupInfo(a[2]));
    }
  }
}
