package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.TestCertificates;
import dev.hbase.cache.operator.metrics.CacheProbe;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * spec.hbase.tls on a real API server, with a real TLS handshake: the operator reads the CA from
 * the policy's ConfigMap and trusts exactly it. Until the ConfigMap is there, holds a certificate
 * and the info servers' certificate chains to it, each step has its Degraded reason and Warning
 * event, the rollout is Blocked, nothing is sent to HBase and no pod restarts; then the roll runs
 * and the status carries the figures read over HTTPS, each pod asked by its DNS name.
 *
 * <p>The RegionServers' info servers are one HTTPS server on loopback with a certificate for {@code
 * localhost} (keytool), answering HBase 2.6.4's /jmx; the probe the operator makes from the
 * ConfigMap's CA ({@link JmxScraper#secured}, as in production) is asked at the pod's DNS name,
 * which this test records and sends to that server (no DNS here for the pods' names).
 */
@EnableKubeAPIServer
class TlsInfoServersIT extends OperatorHarness {
  static final String PASSWORD = TestCertificates.PASSWORD;
  final List<String> asked = new CopyOnWriteArrayList<>();
  final List<HttpsServer> servers = new ArrayList<>();

  @AfterEach
  void stopInfoServers() {
    servers.forEach(x -> x.stop(0));
  }

  @Test
  void theInfoServersAreReadOverHttpsTrustingExactlyThePolicysCaAndTheirNames() throws Exception {
    cluster("4Gi", false);
    Path dir = Files.createDirectories(Path.of("target", "tls-" + System.nanoTime()));
    String names = "*.rs." + ns + ".svc.cluster.local";
    Path good = TestCertificates.selfSigned(dir, "good", "dns:" + names);
    Path other =
        TestCertificates.selfSigned(dir, "other", "dns:" + names); // the right names, another CA
    Path wrongName = TestCertificates.selfSigned(dir, "wrong", "dns:localhost,ip:127.0.0.1");
    int goodPort = infoServer(good);
    int wrongNamePort = infoServer(wrongName);
    AtomicInteger target = new AtomicInteger(goodPort);
    // one probe per CA text, as production keeps them (SecuredProbes.jmx): the operator checks a
    // pod's server once per probe
    Map<String, CacheProbe> probes = new java.util.concurrent.ConcurrentHashMap<>();
    operator(
        null,
        client,
        (pem, spnego) -> {
          var real = JmxScraper.secured(Duration.ofSeconds(5), pem, spnego);
          return probes.computeIfAbsent(
              pem,
              k ->
                  new CacheProbe() {
                    @Override
                    public CacheSample scrape(String host, int port) {
                      throw new AssertionError("asked by host alone: " + host);
                    }

                    @Override
                    public CacheSample scrape(String address, String name, int port)
                        throws java.io.IOException {
                      asked.add(name + ":" + port + "@" + address);
                      // every pod's server is this test's HTTPS server on loopback
                      return real.scrape("127.0.0.1", name, target.get());
                    }
                  });
        });
    policy("tls", "  mode: MetaOnly\n  hbase:\n    tls:\n      caConfigMap: info-ca\n");

    awaitRefused("TlsCaMissing", "info-ca");

    // from here the ConfigMap's changes alone wake the operator (no spec change)
    client.resource(ca("not a certificate")).create();
    awaitRefused("TlsCaInvalid", "holds no PEM certificate");

    client.resource(ca(TestCertificates.exportPem(dir, other, "other"))).update();
    awaitRefused("TlsUntrusted", "not trusted");

    // the CA of the server's certificate, which names localhost, not the pod
    target.set(wrongNamePort);
    client.resource(ca(TestCertificates.exportPem(dir, wrongName, "wrong"))).update();
    awaitRefused("TlsUntrusted", "does not carry the name rs-0.rs." + ns + ".svc.cluster.local");

    // until here: nothing sent to HBase, no pod restarted
    assertThat(hbase.connects)
        .as("connections to HBase before the info servers are trusted")
        .isZero();
    assertThat(kube.deletes).as("pods deleted before the info servers are trusted").isEmpty();

    target.set(goodPort);
    client.resource(ca(TestCertificates.exportPem(dir, good, "good"))).update();
    await().atMost(Duration.ofSeconds(90)).until(() -> idleAndApplied("tls"));
    assertThat(kube.deletes).hasSize(3);
    assertThat(reason("tls", "Degraded", "False")).isEqualTo("AsPlanned");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(get("tls").getStatus().getRegionServers())
                    .as("every pod's figures, read over HTTPS")
                    .hasSize(3)
                    .allSatisfy(r -> assertThat(r.getCumulativeHitRatio()).isNotNull()));
    List<String> seen = new ArrayList<>(new java.util.TreeSet<>(asked));
    assertThat(seen)
        .as("each pod asked at its IP, its server proving its DNS name under the governing service")
        .isNotEmpty()
        .allSatisfy(
            x ->
                assertThat(x)
                    .matches(
                        "rs-[012]\\.rs\\."
                            + ns
                            + "\\.svc\\.cluster\\.local:16030@\\d+\\.\\d+\\.\\d+\\.\\d+"));
    assertThat(seen.stream().map(x -> x.substring(0, x.indexOf(':'))).distinct())
        .containsExactlyInAnyOrder(
            "rs-0.rs." + ns + ".svc.cluster.local",
            "rs-1.rs." + ns + ".svc.cluster.local",
            "rs-2.rs." + ns + ".svc.cluster.local");

    // a roll whose first restarted pod comes back with a certificate the CA does not vouch for
    // (the servers checked before are not asked again): the roll stops at it and is held (HBase's
    // balancer back on), no other pod restarted
    target.set(wrongNamePort);
    int before = kube.deletes.size();
    editPolicy(
        "tls",
        p -> {
          if (p.getMetadata().getAnnotations() == null) {
            p.getMetadata().setAnnotations(new java.util.HashMap<>());
          }
          p.getMetadata()
              .getAnnotations()
              .put(
                  dev.hbase.cache.api.v1alpha1.BlockCachePolicy.RESTART_ANNOTATION,
                  "2026-11-27T10:00:00Z");
          return p;
        });
    awaitRefused("TlsUntrusted", "not trusted");
    assertThat(kube.deletes.size() - before).as("pods restarted by the held roll").isEqualTo(1);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(hbase.balancerOn).as("HBase's balancer while held").isTrue());
  }

  /** An HTTPS server on loopback answering HBase 2.6.4's /jmx with the key of {@code store}. */
  private int infoServer(Path store) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, PASSWORD.toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, PASSWORD.toCharArray());
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    byte[] jmx;
    try (InputStream in =
        JmxScraper.class.getResourceAsStream("jmx-regionserver-2.6.4-persistentfile.json")) {
      jmx = in.readAllBytes();
    }
    HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setHttpsConfigurator(new HttpsConfigurator(ctx));
    server.createContext(
        "/jmx",
        exchange -> {
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, jmx.length);
          exchange.getResponseBody().write(jmx);
          exchange.close();
        });
    server.start();
    servers.add(server);
    return server.getAddress().getPort();
  }

  private ConfigMap ca(String pem) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("info-ca")
        .withNamespace(ns)
        .endMetadata()
        .addToData("ca.crt", pem)
        .build();
  }

  private void awaitRefused(String reason, String inMessage) {
    // within 30 s: a refusal is looked at again after 60 s, so only the ConfigMap's own event can
    // bring the next state this soon
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              assertThat(reason("tls", "Degraded", "True")).isEqualTo(reason);
              assertThat(conditionMessage("tls", "Degraded")).contains(inMessage);
            });
    assertThat(condition("tls", "Ready", "False")).isTrue();
    assertThat(get("tls").getStatus().getRollout().getPhase().name()).isEqualTo("Blocked");
    eventually(
        () ->
            assertThat(events())
                .anyMatch(e -> "Warning".equals(e.getType()) && reason.equals(e.getReason())));
  }
}
