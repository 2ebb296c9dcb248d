import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.security.access.AccessControlClient;
import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The workload on a Kerberos-secured HBase (charts/hbase's security.kerberos mode, make
 * e2e-secured): a login from a keytab before any command, and the administrator's {@code grant}.
 */
final class Secured {
  private Secured() {}

  /**
   * Logs in as WORKLOAD_PRINCIPAL from the keytab WORKLOAD_KEYTAB when both are set (the pod's
   * hbase-site then says hbase.security.authentication=kerberos, and its JVM where krb5.conf is);
   * else does nothing. WORKLOAD_AUTH=simple: no login, the client speaks SIMPLE. The
   * ticket's lifetime (10 h on the demo KDC) outlasts any e2e reader.
   */
  static void loginIfAsked(Configuration conf) throws IOException {
    if ("simple".equals(System.getenv("WORKLOAD_AUTH"))) {
      // a client that does not use Kerberos at all (the pod's core-site.xml and hbase-site.xml
      // say kerberos): a secured cluster must refuse it
      conf.set("hbase.security.authentication", "simple");
      conf.set("hadoop.security.authentication", "simple");
      UserGroupInformation.setConfiguration(conf);
      System.out.println("AUTH SIMPLE");
      return;
    }
    String principal = System.getenv("WORKLOAD_PRINCIPAL");
    String keytab = System.getenv("WORKLOAD_KEYTAB");
    if (principal == null || principal.isEmpty() || keytab == null || keytab.isEmpty()) {
      return;
    }
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation.loginUserFromKeytab(principal, keytab);
    System.out.println("LOGIN " + UserGroupInformation.getLoginUser().getUserName());
  }

  /**
   * {@code grant USER ACTIONS}: USER gets the global permissions ACTIONS (letters of RWXCA, e.g.
   * RA), as the shell's {@code grant 'USER', 'RA'} gives them; prints {@code GRANT OK USER ACTIONS}.
   */
  static void grant(Configuration conf, String user, String actions) throws Throwable {
    List<Permission.Action> granted = new ArrayList<>();
    for (char c : actions.toCharArray()) {
      Permission.Action action = null;
      for (Permission.Action a : Permission.Action.values()) {
        if (a.code() == (byte) c) {
          action = a;
        }
      }
      if (action == null) {
        throw new IllegalArgumentException("no HBase permission '" + c + "' (one of R, W, X, C, A)");
      }
      granted.add(action);
    }
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      AccessControlClient.grant(conn, user, granted.toArray(new Permission.Action[0]));
    }
    System.out.println("GRANT OK " + user + " " + actions);
  }
}
