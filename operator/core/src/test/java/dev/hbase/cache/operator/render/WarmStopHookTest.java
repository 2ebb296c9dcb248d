package dev.hbase.cache.operator.render;

import static dev.hbase.cache.operator.render.CacheMapGuardTest.HEAD;
import static dev.hbase.cache.operator.render.CacheVolumeGroupTest.PERSISTENT;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The preStop hook that makes every stop a warm stop: rendered with DrainAndReload, the grace
 * period raised by its bound, never over a hook of the template's own; the script run by bash
 * against a stand-in info server: when it lets a stop go, and that it keeps to its bound. (Against
 * a real RegionServer: DrainAndReloadIT in make test-hbase.)
 */
class WarmStopHookTest {
  static final Container BARE = CacheVolumeGroupTest.BARE;

  static PodSpec render(String rollout, Container regionServer, int infoPort) {
    BlockCachePolicy policy =
        Serialization.unmarshal(
            HEAD + "  mode: PersistentFile\n" + rollout, BlockCachePolicy.class);
    return Desired.regionServerPatch(
            policy, PERSISTENT, "rev", regionServer, "conf", null, infoPort)
        .getSpec()
        .getTemplate()
        .getSpec();
  }

  @Test
  void drainAndReloadGetsTheHookWithTheInfoPortAndAGracePeriodLongerByItsBound() {
    PodSpec spec = render("", BARE, 16031);
    var hook = spec.getContainers().get(0).getLifecycle().getPreStop().getExec().getCommand();
    assertThat(hook)
        .containsExactly(
            "bash",
            "-c",
            PodHooks.WARM_STOP_SCRIPT,
            PodHooks.WARM_STOP,
            "16031",
            Long.toString(PodHooks.WARM_STOP_SECONDS),
            Long.toString(PodHooks.WARM_STOP_STALL_SECONDS));
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds() + PodHooks.WARM_STOP_SECONDS);
  }

  @Test
  void inPlaceGetsNoHookAndThePlansGracePeriod() {
    PodSpec spec = render("  rollout:\n    strategy: InPlace\n", BARE, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle().getPreStop()).isNull();
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds());
  }

  @Test
  void aHookOfTheTemplatesOwnIsKept() {
    Container withMover =
        new ContainerBuilder(BARE)
            .withNewLifecycle()
            .withNewPreStop()
            .withNewExec()
            .withCommand("/stackable/hbase/bin/hbase", "org.apache.hadoop.hbase.util.RegionMover")
            .endExec()
            .endPreStop()
            .endLifecycle()
            .build();
    PodSpec spec = render("", withMover, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle().getPreStop())
        .as("the patch sets no preStop hook")
        .isNull();
    assertThat(spec.getTerminationGracePeriodSeconds())
        .isEqualTo(PERSISTENT.terminationGracePeriodSeconds());
  }

  @Test
  void theOperatorsOwnHookFromAnEarlierApplyIsRenderedAgain() {
    Container applied =
        new ContainerBuilder(BARE)
            .withNewLifecycle()
            .withPreStop(PodHooks.warmStop(policy(), BARE, 16030).orElseThrow())
            .endLifecycle()
            .build();
    PodSpec spec = render("", applied, 16030);
    assertThat(spec.getContainers().get(0).getLifecycle().getPreStop().getExec().getCommand())
        .contains(PodHooks.WARM_STOP);
  }

  // ------------------------------------------------------------------ the script, run by bash

  /**
   * A RegionServer's info server as the hook reads it: /jmx answers a region count, after {@code
   * delay} (a hung JVM: never).
   */
  static final class InfoServer implements AutoCloseable {
    final HttpServer http;
    volatile int regions;
    volatile Duration delay = Duration.ZERO;

    InfoServer(int regions) throws IOException {
      this.regions = regions;
      http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      http.setExecutor(Executors.newCachedThreadPool());
      http.createContext(
          "/jmx",
          x -> {
            try {
              Thread.sleep(delay.toMillis());
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            byte[] body =
                ("{\"beans\": [ {\n    \"regionCount\" : " + this.regions + ",\n  } ]}\n")
                    .getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
            x.close();
          });
      http.start();
    }

    int port() {
      return http.getAddress().getPort();
    }

    @Override
    public void close() {
      http.stop(0);
    }
  }

  /** Runs warm-stop.sh as the kubelet does; returns how long it held. */
  static Duration hold(int port, long bound, long stall) throws Exception {
    Instant start = Instant.now();
    Process p =
        new ProcessBuilder(
                "bash",
                "-c",
                PodHooks.WARM_STOP_SCRIPT,
                PodHooks.WARM_STOP,
                Integer.toString(port),
                Long.toString(bound),
                Long.toString(stall))
            .redirectErrorStream(true)
            .start();
    assertThat(p.waitFor(bound + 30, TimeUnit.SECONDS)).as("the hook returns").isTrue();
    assertThat(p.exitValue()).isZero();
    return Duration.between(start, Instant.now());
  }

  @Test
  void aDrainedOrStoppedServerIsLetGoAtOnce() throws Exception {
    try (InfoServer rs = new InfoServer(0)) {
      assertThat(hold(rs.port(), 60, 20)).isLessThan(Duration.ofSeconds(10));
    }
    int closed;
    try (var s = new java.net.ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    assertThat(hold(closed, 60, 20)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void aServerWhoseRegionsDoNotLeaveIsLetGoAfterTheStallBound() throws Exception {
    try (InfoServer rs = new InfoServer(5)) {
      Duration held = hold(rs.port(), 60, 3);
      assertThat(held)
          .isGreaterThanOrEqualTo(Duration.ofSeconds(2))
          .isLessThan(Duration.ofSeconds(20));
    }
  }

  /**
   * The hook never holds past its bound, even when the server answers slowly or not at all (a hung
   * JVM accepts and never answers): the grace period the operator renders leaves HBase its own time
   * after the bound. Before every read was cut at the time left, one read alone held 5 s, past a
   * bound of 2.
   */
  @Test
  void theHookKeepsToItsBoundWhateverTheServerAnswers() throws Exception {
    try (InfoServer rs = new InfoServer(5)) {
      Duration held = hold(rs.port(), 2, 60);
      assertThat(held)
          .isGreaterThanOrEqualTo(Duration.ofSeconds(1))
          .isLessThan(Duration.ofMillis(4500));
      rs.delay = Duration.ofMinutes(5); // hung
      held = hold(rs.port(), 2, 60);
      assertThat(held).isLessThan(Duration.ofMillis(4500));
      // regions leaving all the time: the bound alone ends the hold
      rs.delay = Duration.ZERO;
      var falls = Executors.newSingleThreadScheduledExecutor();
      rs.regions = 1000;
      falls.scheduleAtFixedRate(() -> rs.regions--, 0, 200, TimeUnit.MILLISECONDS);
      try {
        held = hold(rs.port(), 3, 60);
        assertThat(held)
            .isGreaterThanOrEqualTo(Duration.ofSeconds(2))
            .isLessThan(Duration.ofMillis(5500));
      } finally {
        falls.shutdownNow();
      }
    }
  }

  private static BlockCachePolicy policy() {
    return Serialization.unmarshal(HEAD + "  mode: PersistentFile\n", BlockCachePolicy.class);
  }
}
