package dev.hbase.cache.operator.connection;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.minikdc.MiniKdc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Connections and the Kerberos logins they were made as, with a real KDC (MiniKdc): a login dropped
 * closes its own connections and no other, even another namespace's login from the same keytab and
 * principal (two Secrets holding one keytab).
 */
class KerberosConnectionsTest {
  static MiniKdc kdc;
  static byte[] keytab;

  @BeforeAll
  static void startKdc() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "kdc-conn-" + System.nanoTime()));
    kdc = new MiniKdc(MiniKdc.createConf(), dir.toFile());
    kdc.start();
    Path file = dir.resolve("shared.keytab");
    kdc.createPrincipal(file.toFile(), "shared");
    keytab = Files.readAllBytes(file);
  }

  @AfterAll
  static void stopKdc() {
    if (kdc != null) {
      kdc.stop();
    }
  }

  /** A fake connection that records its close under its name. */
  record Fake(String name, List<String> closed) {
    HBaseCluster proxy() {
      return (HBaseCluster)
          java.lang.reflect.Proxy.newProxyInstance(
              getClass().getClassLoader(),
              new Class<?>[] {HBaseCluster.class},
              (p, method, args) -> {
                if (method.getName().equals("close")) {
                  closed.add(name);
                }
                return null;
              });
    }
  }

  @Test
  void aDroppedLoginClosesItsOwnConnectionsOnly() throws Exception {
    List<String> closed = new java.util.concurrent.CopyOnWriteArrayList<>();
    List<KerberosLogin> connectedAs = new ArrayList<>();
    HBaseClusters clusters =
        new HBaseClusters(
            (settings, login) -> {
              connectedAs.add(login);
              return new Fake("connection " + connectedAs.size(), closed).proxy();
            });
    try (KerberosIdentities identities = new KerberosIdentities(clusters::closeAll)) {
      String principal = "shared@" + kdc.getRealm();
      KerberosLogin a = identities.login("team-a/keytab", principal, keytab);
      KerberosLogin b = identities.login("team-b/keytab", principal, keytab);
      var pa = HBaseClustersTest.policy("team-a", "p");
      var pb = HBaseClustersTest.policy("team-b", "p");
      HBaseCluster atA = clusters.of(pa, base("team-a"), a);
      HBaseCluster atB = clusters.of(pb, base("team-b"), b);
      assertThat(connectedAs).containsExactly(a, b);

      identities.forget("team-a/keytab"); // team-a's Secret deleted, say
      // closed off the caller's thread
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(closed)
                      .as("connections closed: team-a's (the first made), not team-b's")
                      .containsExactly("connection 1"));
      assertThat(clusters.of(pb, base("team-b"), b))
          .as("team-b's connection, still open, handed out again")
          .isSameAs(atB);
      assertThat(connectedAs).hasSize(2);

      // team-a's Secret back with the same keytab: a new login, a new connection
      KerberosLogin again = identities.login("team-a/keytab", principal, keytab);
      assertThat(clusters.of(pa, base("team-a"), again)).isNotSameAs(atA);
      assertThat(connectedAs).hasSize(3);
    }
  }

  /** A base ConfigMap of the namespace. */
  static ConfigMap base(String ns) {
    ConfigMap c =
        HBaseClustersTest.base(
            HBaseClustersTest.property("hbase.zookeeper.quorum", "zk.shared")
                + HBaseClustersTest.property("hbase.security.authentication", "kerberos"));
    c.getMetadata().setNamespace(ns);
    return c;
  }
}
