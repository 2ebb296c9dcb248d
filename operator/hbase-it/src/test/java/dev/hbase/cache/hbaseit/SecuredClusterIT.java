package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.DrainTargets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The operator's HBase side against a Kerberos-secured HBase 2.6.4: a real KDC ({@link SecureKdc}),
 * ZooKeeper, an HMaster and two RegionServers that require Kerberos on RPC (protection {@code
 * privacy}), log in to ZooKeeper over SASL and check HBase ACLs. The operator logs in from its
 * keytab ({@link KerberosLogin}) and drains, reloads and samples as that identity; its ticket (70 s
 * here) runs out during the test and is renewed from the keytab; a wrong keytab and a user without
 * ADMIN fail with errors that say so.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SecuredClusterIT {

  static final Duration TICKET_LIFETIME = Duration.ofSeconds(30);
  static final int ROWS = 16_000;
  static final int REGIONS = 4;

  SecureKdc kdc;
  KerberosLogin login;
  Instant loggedIn;

  /** The end of the ticket of the first login, read at once (a relogin later moves it). */
  java.util.Optional<Instant> firstTicketEnd;

  LocalHBase hbase;
  AdminHBaseCluster admin;
  dev.hbase.cache.operator.metrics.CacheProbe scraper;

  @BeforeAll
  void startSecuredCluster() throws Exception {
    // as an unsecured connection made first in this JVM leaves HBase's client: its provider
    // selector (one per JVM) configured without security (PerUserSaslSelector says why)
    org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders.reset();
    org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders.getInstance(
        org.apache.hadoop.hbase.HBaseConfiguration.create());
    kdc =
        SecureKdc.start(
            LocalHBase.IT_DIR.resolve("kdc-" + System.currentTimeMillis()), TICKET_LIFETIME);
    login = KerberosLogin.fromKeytab(kdc.principal(SecureKdc.OPERATOR), kdc.operatorKeytab);
    loggedIn = Instant.now();
    firstTicketEnd = login.ticketEnd();
    // the probe a policy's spec.hbase.tls gets: its CA, SPNEGO as its identity
    scraper =
        dev.hbase.cache.operator.metrics.SecuredProbes.jmx(Duration.ofSeconds(5))
            .probe(Files.readString(kdc.caPem), login);
    hbase = LocalHBase.startSecured("secured", 2, LocalHBase.Security.kerberos(kdc, login));
    for (int i = 0; i < 2; i++) {
      hbase.startRegionServer(
          i,
          Plans.settings(
              Plans.plan(
                  CacheMode.PersistentFile,
                  Files.createDirectories(hbase.dir.resolve("cache-rs" + i)))));
    }
    admin = hbase.admin();
    hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
    hbase.awaitRegionServerReported(admin, 1, Duration.ofSeconds(90));
    TestTable table = TestTable.create(hbase.connection(), "secured", ROWS, REGIONS);
    assertThat(table.scanAll()).isEqualTo(ROWS);
  }

  @AfterAll
  void stop() {
    if (hbase != null) {
      hbase.close();
    }
    if (login != null) {
      login.close();
    }
    if (kdc != null) {
      kdc.close();
    }
  }

  @Test
  @Order(1)
  void theOperatorDrainsReloadsAndSamplesAsItsKerberosIdentity() throws Exception {
    // the first login's ticket, read right after it: the cluster's start may outlast it (a cold CI
    // machine took over 30 s with image builds beside it), and the relogin then moves ticketEnd()
    assertThat(firstTicketEnd)
        .as("the operator's first ticket, asked for %s", TICKET_LIFETIME)
        .hasValueSatisfying(
            end ->
                assertThat(Duration.between(loggedIn, end))
                    .isLessThanOrEqualTo(TICKET_LIFETIME.plusSeconds(5)));
    long recounted = dev.hbase.cache.operator.hbase.RpcAnswerCap.saslRecountedBytes();
    drainAndReload(admin, 1);
    // RPC with privacy: what HBase's SASL unwrap made was copied into the operator's counted
    // buffers (its unwrap is added where the channel's watched pipeline does not see it)
    assertThat(dev.hbase.cache.operator.hbase.RpcAnswerCap.saslRecountedBytes())
        .as("bytes of unwrapped answers counted in the operator's HBase buffers")
        .isGreaterThan(recounted);
    // the info server at its address, proving the name in its certificate and HTTP principal; a
    // RegionServer publishes its Server bean a little after it serves (seen missing once on a cold
    // CI machine with image builds beside it): only that answer is asked again
    CacheSample s =
        await("a sample of rs0 over HTTPS with SPNEGO")
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofSeconds(1))
            .ignoreExceptionsMatching(e -> String.valueOf(e.getMessage()).contains("no bean"))
            .until(
                () ->
                    scraper.scrape(
                        "127.0.0.1", SecureKdc.SERVICE_HOST, hbase.regionServerInfoPort(0)),
                x -> x != null);
    assertThat(s.regionCount())
        .as("the sample's region count on rs0, over HTTPS with SPNEGO")
        .isPositive();
  }

  @Test
  @Order(2)
  void aTicketThatRunsOutIsRenewedFromTheKeytab() throws Exception {
    Instant firstEnd = login.ticketEnd().orElseThrow();
    // past the end of every ticket the login holds (the ticket-granting ticket and the service
    // tickets cached with it), so that the connections opened below need a new one
    Instant allEnd = latestTicketEnd(login);
    await("the end of every ticket of the first login, " + allEnd)
        .atMost(TICKET_LIFETIME.multipliedBy(3))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> Instant.now().isAfter(allEnd.plusSeconds(1)));
    try (AdminHBaseCluster fresh =
        AdminHBaseCluster.connect(
            hbase.clientSettings(), AdminHBaseCluster.Options.defaults(), login)) {
      drainAndReload(fresh, 0);
    }
    assertThat(login.ticketEnd())
        .as("the ticket after the first one (ended %s) ran out", firstEnd)
        .hasValueSatisfying(end -> assertThat(end).isAfter(firstEnd));
  }

  /** The latest end of the tickets the login's Subject holds. */
  private static Instant latestTicketEnd(KerberosLogin login) throws Exception {
    var m = org.apache.hadoop.security.UserGroupInformation.class.getDeclaredMethod("getSubject");
    m.setAccessible(true);
    javax.security.auth.Subject subject =
        (javax.security.auth.Subject) m.invoke(login.user().getUGI());
    return subject.getPrivateCredentials(javax.security.auth.kerberos.KerberosTicket.class).stream()
        .map(t -> t.getEndTime().toInstant())
        .max(Instant::compareTo)
        .orElseThrow();
  }

  @Test
  @Order(3)
  void aKeytabWithoutThePrincipalsKeyFailsTheLogin() {
    assertThatThrownBy(
            () -> KerberosLogin.fromKeytab(kdc.principal(SecureKdc.OPERATOR), kdc.readerKeytab))
        .isInstanceOf(HBaseClusterException.LoginFailed.class)
        .hasMessageContaining(SecureKdc.OPERATOR);
    assertThatThrownBy(
            () ->
                KerberosLogin.fromKeytab(
                    kdc.principal(SecureKdc.OPERATOR), hbase.dir.resolve("no-such.keytab")))
        .isInstanceOf(HBaseClusterException.LoginFailed.class)
        .hasMessageContaining("no readable keytab");
  }

  @Test
  @Order(4)
  void aUserWithoutAdminCannotDrainAndNothingMoves() throws Exception {
    try (KerberosLogin reader =
            KerberosLogin.fromKeytab(kdc.principal(SecureKdc.READER), kdc.readerKeytab);
        AdminHBaseCluster asReader =
            AdminHBaseCluster.connect(
                hbase.clientSettings(), AdminHBaseCluster.Options.defaults(), reader)) {
      ClusterSnapshot s = asReader.snapshot();
      assertThat(s.masterReachable()).as("the reader's view of the cluster: %s", s).isFalse();
      assertThat(s.error()).as("why the reader sees no cluster").contains("AccessDenied");
      ClusterSnapshot asOperator = awaitSettled();
      ServerState victim = asOperator.live().get(0);
      ServerState other = asOperator.live().get(1);
      assertThatThrownBy(
              () ->
                  asReader.drain(victim.id(), DrainTargets.plan(victim.regions(), List.of(other))))
          .isInstanceOf(HBaseClusterException.AccessDenied.class)
          .hasMessageContaining("refused by HBase's ACLs");
      assertThat(admin.decommissioned()).as("decommission marks after the refused drain").isEmpty();
      assertThat(admin.snapshot().live(victim.id()).orElseThrow().regions())
          .as("%s's regions after the refused drain", victim.id())
          .containsExactlyInAnyOrderElementsOf(victim.regions());
    }
  }

  /**
   * What the README tells a user to grant ({@code grant '<principal>', 'RA'}: READ and ADMIN,
   * globally) is enough for the operator: a principal with that grant only, not a superuser, reads
   * the cluster's state, drains and reloads. ADMIN alone is not: HBase refuses the state
   * ("Insufficient permissions ... (global, action=READ)"), seen here first.
   */
  @Test
  @Order(5)
  void thePermissionTheReadmeNamesIsEnough() throws Throwable {
    try (var superuser = hbase.connection()) {
      org.apache.hadoop.hbase.security.access.AccessControlClient.grant(
          superuser,
          SecureKdc.TEAM_ADMIN,
          org.apache.hadoop.hbase.security.access.Permission.Action.READ,
          org.apache.hadoop.hbase.security.access.Permission.Action.ADMIN);
    }
    try (KerberosLogin teamAdmin =
            KerberosLogin.fromKeytab(kdc.principal(SecureKdc.TEAM_ADMIN), kdc.teamAdminKeytab);
        AdminHBaseCluster asTeamAdmin =
            AdminHBaseCluster.connect(
                hbase.clientSettings(), AdminHBaseCluster.Options.defaults(), teamAdmin)) {
      String[] last = new String[1];
      try {
        await("the grant in effect")
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> {
                  ClusterSnapshot s = asTeamAdmin.snapshot();
                  last[0] = s.error();
                  return s.masterReachable();
                });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("the cluster's state as team-admin: " + last[0], e);
      }
      drainAndReload(asTeamAdmin, 1);
    }
  }

  @Test
  @Order(6)
  void withoutALoginNothingReachesTheSecuredCluster() throws Exception {
    try (AdminHBaseCluster anonymous =
        AdminHBaseCluster.connect(hbase.clientSettings(), AdminHBaseCluster.Options.defaults())) {
      assertThat(anonymous.snapshot().masterReachable()).isFalse();
    }
  }

  @Test
  @Order(7)
  void anInfoServerNotTrustedOrNotAuthenticatedGivesNoSampleAndSaysWhy() throws Exception {
    int port = hbase.regionServerInfoPort(0);
    Duration t = Duration.ofSeconds(5);
    assertThatThrownBy(() -> new JmxScraper(t).scrape(SecureKdc.SERVICE_HOST, port))
        .as("plain HTTP to an HTTPS info server")
        .isInstanceOf(JmxScraper.ScrapeException.class);
    String otherCa = selfSignedElsewhere();
    assertThatThrownBy(
            () -> JmxScraper.secured(t, otherCa, login).scrape(SecureKdc.SERVICE_HOST, port))
        .as("a certificate from another CA")
        .isInstanceOf(JmxScraper.ScrapeException.class)
        .hasMessageContaining("not trusted")
        .satisfies(
            e ->
                assertThat(((JmxScraper.ScrapeException) e).untrusted())
                    .as("a refusal the operator reports as TlsUntrusted")
                    .isTrue());
    // the trusted CA, at the server's address, asked as a name its certificate does not carry
    assertThatThrownBy(
            () ->
                JmxScraper.secured(t, Files.readString(kdc.caPem), null)
                    .scrape("127.0.0.1", "rs-0.hbase.team-a.svc.cluster.local", port))
        .as("a name the certificate does not carry")
        .isInstanceOf(JmxScraper.ScrapeException.class)
        .hasMessageContaining("does not carry the name")
        .satisfies(
            e ->
                assertThat(((JmxScraper.ScrapeException) e).untrusted())
                    .as("a refusal the operator reports as TlsUntrusted")
                    .isTrue());
    assertThatThrownBy(
            () ->
                JmxScraper.secured(t, Files.readString(kdc.caPem), null)
                    .scrape(SecureKdc.SERVICE_HOST, port))
        .as("no SPNEGO")
        .isInstanceOf(JmxScraper.ScrapeException.class)
        .hasMessageContaining("HTTP 401");
  }

  /** A certificate of a CA the info servers' certificate does not chain to. */
  private String selfSignedElsewhere() throws Exception {
    Path other = Files.createDirectories(hbase.dir.resolve("other-ca"));
    Path store = other.resolve("other.p12");
    Path pem = other.resolve("ca.pem");
    SecureKdc.keytool(
        "-genkeypair",
        "-alias",
        "other",
        "-keyalg",
        "RSA",
        "-dname",
        "CN=other",
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        store.toString(),
        "-storepass",
        "changeit",
        "-keypass",
        "changeit");
    SecureKdc.keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "other",
        "-keystore",
        store.toString(),
        "-storepass",
        "changeit",
        "-file",
        pem.toString());
    return Files.readString(pem);
  }

  /**
   * Drains RegionServer i to the other, then sends its regions back: both through {@code admin}.
   */
  private void drainAndReload(AdminHBaseCluster admin, int i) throws Exception {
    ClusterSnapshot start = awaitSettled();
    ServerState victim =
        start.liveAt(hbase.regionServerHost(i), hbase.regionServerPort(i)).orElseThrow();
    ServerState other = start.live().stream().filter(x -> x != victim).findFirst().orElseThrow();
    List<String> regions = victim.regions();
    assertThat(regions).as("regions on rs%d", i).isNotEmpty();
    Map<String, ServerId> targets = DrainTargets.plan(regions, List.of(other));
    admin.drain(victim.id(), targets);
    await("rs" + i + " drained")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> admin.snapshot().live(victim.id()).orElseThrow().regionCount() == 0);
    await("rs" + i + "'s regions back")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              admin.recommission(victim.id(), regions);
              return admin
                  .snapshot()
                  .live(victim.id())
                  .orElseThrow()
                  .regions()
                  .containsAll(regions);
            });
    assertThat(admin.decommissioned()).as("decommission marks after the reload").isEmpty();
  }

  private ClusterSnapshot awaitSettled() {
    ClusterSnapshot[] s = new ClusterSnapshot[1];
    await("both RegionServers live, nothing in transition")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              s[0] = admin.snapshot();
              return s[0].masterReachable()
                  && s[0].regionsInTransition() == 0
                  && s[0].live().size() == 2;
            });
    return s[0];
  }
}
