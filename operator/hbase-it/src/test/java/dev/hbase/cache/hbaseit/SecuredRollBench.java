package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.metrics.SecuredProbes;
import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Not a test of {@code make test-hbase} (not matched by {@code *IT}): {@link WarmRollIT}'s two
 * rolls on a Kerberos-secured cluster (RPC with privacy, ZooKeeper SASL, ACLs; info servers over
 * HTTPS with SPNEGO), the operator's side logged in from its keytab and reading every
 * RegionServer's /jmx through the probe a policy's {@code spec.hbase.tls} gets (the CA, the
 * server's name proven in the handshake, SPNEGO as the policy's identity): what its warm gate and
 * its cache figures read on such a cluster. With {@code -Dsecured.plainInfoServers=true} the info
 * servers serve plain HTTP instead (Kerberos on RPC and ZooKeeper only). Its {@code RESULT} lines
 * sit beside WarmRollIT's for the figures of a secured roll against an unsecured one: {@code make
 * bench-roll-secured} runs both, one after the other.
 */
class SecuredRollBench {

  @Test
  void twoRollsOnASecuredCluster() throws Exception {
    boolean plain = Boolean.getBoolean("secured.plainInfoServers");
    try (SecureKdc kdc =
            secure(
                SecureKdc.start(
                    LocalHBase.IT_DIR.resolve("kdc-" + System.currentTimeMillis()),
                    Duration.ofHours(1)),
                plain);
        KerberosLogin login =
            KerberosLogin.fromKeytab(kdc.principal(SecureKdc.OPERATOR), kdc.operatorKeytab)) {
      WarmRollIT.Run run =
          plain
              ? WarmRollIT.run(
                  WarmRollIT.Drain.TARGETS_WARM, LocalHBase.Security.kerberos(kdc, login))
              : WarmRollIT.run(
                  WarmRollIT.Drain.TARGETS_WARM,
                  LocalHBase.Security.kerberos(kdc, login),
                  SecuredProbes.jmx(Duration.ofSeconds(3))
                      .probe(Files.readString(kdc.caPem), login));
      System.out.println(
          "RESULT info servers: "
              + (plain ? "plain HTTP" : "HTTPS with SPNEGO, the policy's probe"));
      for (LocalRoll.Result r : run.rolls()) {
        assertThat(r.reads().failed()).as("failed reads in %s", r.label()).isZero();
        assertThat(r.lastRoll().getRestarts()).isEqualTo(WarmRollIT.SERVERS);
        // the warm gate and the figures read the caches: a probe that read nothing would leave
        // every pod to its warm gate's timeout and the roll without a cache figure
        assertThat(r.servedFromCache()).as("cache figure of %s", r.label()).isNotNull();
      }
    }
  }

  private static SecureKdc secure(SecureKdc kdc, boolean plainInfoServers) {
    return plainInfoServers ? kdc.withPlainInfoServers() : kdc;
  }
}
