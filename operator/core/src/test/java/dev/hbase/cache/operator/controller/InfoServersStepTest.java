package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.spec.TlsSpec;
import dev.hbase.cache.operator.metrics.InfoServers;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which info servers the base hbase-site and spec.hbase.tls let the operator read, and how. */
class InfoServersStepTest {
  static final TlsSpec TLS = new TlsSpec().setCaConfigMap("info-ca");

  @Test
  void anUnsecuredSiteIsReadOverPlainHttpAndHttpsWhenThePolicyNamesACa() {
    assertThat(InfoServersStep.refusal(null, Map.of(), false)).isNull();
    assertThat(InfoServersStep.refusal(null, Map.of("hbase.ssl.enabled", "false"), false)).isNull();
    // the CA given while the base site does not say so (TLS set in another file): HTTPS
    assertThat(InfoServersStep.refusal(TLS, Map.of(), false)).isNull();
    assertThat(InfoServersStep.refusal(TLS, Map.of("hbase.ssl.enabled", "true"), false)).isNull();
  }

  @Test
  void httpsOrSpnegoWithoutACaIsRefusedAndSpnegoWithoutAnIdentityToo() {
    assertThat(InfoServersStep.refusal(null, Map.of("hbase.ssl.enabled", " TRUE "), false))
        .extracting(InfoServersStep.Refused::reason)
        .isEqualTo(Reason.TlsCaMissing);
    var spnego = Map.of("hbase.security.authentication.ui", "kerberos");
    assertThat(InfoServersStep.refusal(null, spnego, true))
        .extracting(InfoServersStep.Refused::reason)
        .isEqualTo(Reason.TlsCaMissing);
    assertThat(InfoServersStep.refusal(TLS, spnego, false))
        .extracting(InfoServersStep.Refused::reason)
        .isEqualTo(Reason.SpnegoWithoutKerberos);
    assertThat(InfoServersStep.refusal(TLS, spnego, true)).isNull();
  }

  @Test
  void aPodIsAskedAtItsIpOrAtItsDnsNameUnderTheGoverningService() {
    PodView pod = new PodView("rs-1", "uid", 1, "rev", true, false, null, "10.0.0.7", false, false);
    assertThat(InfoServers.byIp((h, p) -> null, 16030).name(pod)).isEqualTo("10.0.0.7");
    assertThat(InfoServers.byName((h, p) -> null, 16030, "rs", "team-a", "cluster.local").name(pod))
        .isEqualTo("rs-1.rs.team-a.svc.cluster.local");
  }
}
