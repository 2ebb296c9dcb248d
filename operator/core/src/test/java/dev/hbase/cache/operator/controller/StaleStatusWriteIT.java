package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import io.fabric8.kubeapitest.junit.EnableKubeAPIServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two operators on one API server, neither with leader election (a {@code helm upgrade} that surged
 * a second pod, a deleted pod's replacement starting while it still stops): the status is the
 * roll's record, and a write computed from an older version of the policy must not overwrite a
 * newer one. Operator B's status write is held (on its way to the API server) while operator A
 * records a pod in flight; then B's write goes: the API server refuses it (its resourceVersion is
 * stale), B decides again from the policy as it is now, and A's in-flight entry stays until that
 * pod's restart is done. Before the writes carried a precondition B's refused write was sent again
 * with the newer resourceVersion (JOSDK's retry), and A's entry was gone.
 */
@EnableKubeAPIServer
class StaleStatusWriteIT extends OperatorHarness {

  /** Holds the next status write to the policy once armed, until released; records the answers. */
  static final class Gate implements Interceptor {
    volatile boolean armed;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    volatile String heldBody;
    final List<String> statusWrites = Collections.synchronizedList(new ArrayList<>());

    static boolean statusWrite(HttpRequest r) {
      return "PATCH".equals(r.method())
          && r.uri().getPath().contains("/blockcachepolicies/")
          && r.uri().getPath().endsWith("/status");
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
      if (!statusWrite(request) || !armed) {
        return;
      }
      synchronized (this) {
        if (heldBody != null) {
          return;
        }
        heldBody = request.bodyString();
      }
      held.countDown();
      try {
        release.await(120, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void after(
        HttpRequest request,
        HttpResponse<?> response,
        io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer) {
      if (statusWrite(request)) {
        statusWrites.add(response.code() + " " + request.bodyString());
      }
    }
  }

  /** A client of the test's API server whose requests pass through {@code gate}. */
  KubernetesClient gated(Gate gate) {
    KubernetesClient c =
        new KubernetesClientBuilder()
            .withConfig(client.getConfiguration())
            .withHttpClientBuilderConsumer(h -> h.addOrReplaceInterceptor("gate", gate))
            .build();
    closeAfter.add(c::close);
    return c;
  }

  /** Every status of the policy, in the order the API server stored them. */
  List<BlockCachePolicyStatus> watchStatuses(String name) {
    List<BlockCachePolicyStatus> seen = Collections.synchronizedList(new ArrayList<>());
    var w =
        client
            .resources(BlockCachePolicy.class)
            .inNamespace(ns)
            .withName(name)
            .watch(
                new Watcher<BlockCachePolicy>() {
                  @Override
                  public void eventReceived(Action action, BlockCachePolicy p) {
                    if (p.getStatus() != null) {
                      seen.add(p.getStatus());
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                });
    closeAfter.add(w::close);
    return seen;
  }

  static BlockCachePolicyStatus status(String patchBody) {
    return Serialization.unmarshal(patchBody, BlockCachePolicy.class).getStatus();
  }

  static List<String> inFlight(BlockCachePolicyStatus s) {
    return s == null || s.getRollout() == null || s.getRollout().getInFlight() == null
        ? List.of()
        : s.getRollout().getInFlight().stream().map(PodRoll::getPod).toList();
  }

  /** Whether the status shows the pod's restart done (its RegionServer row's restartedAt). */
  static boolean restarted(BlockCachePolicyStatus s, String pod) {
    return s.getRegionServers() != null
        && s.getRegionServers().stream()
            .anyMatch(r -> pod.equals(r.getPod()) && r.getRestartedAt() != null);
  }

  @Test
  void anOlderWritersStatusIsRefusedAndNoInFlightEntryIsLost() {
    cluster("4Gi", false);
    // A's first status write after the change below is held too, until B's is: else A may write
    // the new observedGeneration first, B's informer shows it, and B (whose status is then
    // unchanged) writes nothing (seen under CI load: "B writes a status" timed out)
    Gate gateA = new Gate();
    operator(null, gated(gateA)); // A
    policy("two", "  mode: Lru\n  rollout:\n    paused: true\n");
    await().atMost(Duration.ofSeconds(60)).until(() -> condition("two", "Valid", "True"));

    Gate gate = new Gate();
    var b = operator(null, gated(gate)); // B, on the same namespace
    List<BlockCachePolicyStatus> stored = watchStatuses("two");

    // a change both see while the roll is paused: B's status write for it is held
    gate.armed = true;
    gateA.armed = true;
    mergePatch("two", "{\"spec\":{\"metrics\":{\"interval\":\"11s\"}}}");
    await("B writes a status")
        .atMost(Duration.ofSeconds(60))
        .until(() -> gate.held.getCount() == 0);
    gateA.release.countDown();
    assertThat(inFlight(status(gate.heldBody)))
        .as("B's held write: computed while the roll was paused")
        .isEmpty();

    // A, alone now, starts the roll and records a pod in flight
    mergePatch("two", "{\"spec\":{\"rollout\":{\"paused\":false}}}");
    await("A records a pod in flight")
        .atMost(Duration.ofSeconds(60))
        .until(() -> !inFlight(get("two").getStatus()).isEmpty());
    String pod = inFlight(get("two").getStatus()).get(0);
    gate.release.countDown();

    await("the roll done")
        .atMost(Duration.ofSeconds(120))
        .until(() -> idleAndApplied("two") && kube.deleteCount.size() == 3);
    b.stop();

    List<String> answers = List.copyOf(gate.statusWrites);
    BlockCachePolicyStatus stale = status(gate.heldBody);
    assertThat(answers).as("B's status writes and their answers").isNotEmpty();
    assertThat(answers.get(0)).as("B's held write, answered").startsWith("409 ");
    assertThat(status(answers.get(0).substring(4))).isEqualTo(stale);
    assertThat(answers.subList(1, answers.size()))
        .as("B's stale status is not sent again")
        .noneMatch(a -> stale.equals(status(a.substring(4))));

    // from A's entry on, every stored status has the pod in flight until its restart is done
    List<BlockCachePolicyStatus> history = List.copyOf(stored);
    int first = -1;
    for (int i = 0; i < history.size(); i++) {
      if (inFlight(history.get(i)).contains(pod)) {
        first = i;
        break;
      }
    }
    assertThat(first).as("the entry was stored").isNotNegative();
    for (int i = first; i < history.size(); i++) {
      BlockCachePolicyStatus s = history.get(i);
      assertThat(inFlight(s).contains(pod) || restarted(s, pod))
          .as(
              "status %d of %d: %s in flight or restarted (in flight: %s)",
              i, history.size(), pod, inFlight(s))
          .isTrue();
    }
    assertThat(kube.deleteCount)
        .as("each pod restarted once")
        .containsOnly(Map.entry("rs-0", 1), Map.entry("rs-1", 1), Map.entry("rs-2", 1));
    assertThat(kube.maxDown).isEqualTo(1);
  }
}
