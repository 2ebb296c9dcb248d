package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.KerberosLogin;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Not a test of {@code make test-hbase} (not matched by {@code *IT}): {@link WarmRollIT}'s two
 * rolls on a Kerberos-secured cluster (RPC with privacy, ZooKeeper SASL, ACLs; info servers over
 * plain HTTP, as the operator manages today), the operator's side logged in from its keytab. Its
 * {@code RESULT} lines sit beside WarmRollIT's for the figures of a secured roll against an
 * unsecured one. Run: {@code mvn -Phbase-it -pl hbase-it -am verify -DskipITs
 * -Dtest='**&#47;hbaseit/SecuredRollBench' -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class SecuredRollBench {

  @Test
  void twoRollsOnASecuredCluster() throws Exception {
    try (SecureKdc kdc =
            SecureKdc.start(
                    LocalHBase.IT_DIR.resolve("kdc-" + System.currentTimeMillis()),
                    Duration.ofHours(1))
                .withPlainInfoServers();
        KerberosLogin login =
            KerberosLogin.fromKeytab(kdc.principal(SecureKdc.OPERATOR), kdc.operatorKeytab)) {
      WarmRollIT.Run run =
          WarmRollIT.run(WarmRollIT.Drain.TARGETS_WARM, LocalHBase.Security.kerberos(kdc, login));
      for (LocalRoll.Result r : run.rolls()) {
        assertThat(r.reads().failed()).as("failed reads in %s", r.label()).isZero();
        assertThat(r.lastRoll().getRestarts()).isEqualTo(WarmRollIT.SERVERS);
      }
    }
  }
}
