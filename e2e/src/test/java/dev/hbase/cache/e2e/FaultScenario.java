package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The base of the scenario classes with fault steps (JUnit tag {@code fault}): after each of them,
 * the check that the cluster is HBase's again; and the helpers the fault steps share.
 */
abstract class FaultScenario extends KindScenario {
  /**
   * After every fault scenario (tag "fault"), whatever it did: the cluster as HBase runs without a
   * roll, HBase's balancer on and no decommission mark left, within a minute.
   */
  @AfterEach
  void clusterGivenBack(TestInfo info) {
    if (outcome == null || outcome.stopped() || !info.getTags().contains("fault")) {
      return;
    }
    AtomicReference<String> seen = new AtomicReference<>();
    Instant t0 = Instant.now();
    try {
      // looked at at once, then every second (it was a first look 3 s late after every fault step)
      await("HBase's balancer on and no decommission mark")
          .atMost(Duration.ofSeconds(60))
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                Boolean on = cluster.balancerOn(Duration.ZERO); // this poll is the retry
                String unread = cluster.balancerUnread;
                String marks = cluster.drainingRegionServers();
                String from = "the master's /jmx";
                if (marks == null) { // not in this HBase's metrics: ask through the Admin API
                  String said = said(admin("decommissioned", List.of()));
                  marks = said.replaceAll("^.*\\[(.*)\\].*$", "$1");
                  from = "Admin.listDecommissionedRegionServers";
                }
                seen.set(
                    String.format(
                        "HBase's balancer on: %s%s; decommissioned RegionServers (%s): [%s]",
                        on, unread.isEmpty() ? "" : " (" + unread + ")", from, marks));
                return Boolean.TRUE.equals(on) && marks.isBlank();
              });
      report.line(
          "- after the scenario (%d s): %s",
          Duration.between(t0, Instant.now()).toSeconds(), seen.get());
    } catch (Throwable e) { // the wait's timeout, or the Admin API's answer failing
      outcome.failedAfter(
          "the check after " + info.getTestMethod().map(m -> m.getName()).orElse("a step"), e);
      report.line(
          "- FAILED after the scenario: the cluster was not given back within 60 s: %s (%s)",
          seen.get(), e.getMessage());
      diagnostics();
      throw new AssertionError("after " + info.getDisplayName() + ": " + seen.get(), e);
    }
  }

  /**
   * An observation window: {@code change} (a description of what changed, or null) must stay null
   * for the whole {@code window}, polled every 2 s; fails at the first change seen.
   */
  void nothingChangesFor(String what, Duration window, Call<String> change) {
    AtomicReference<String> seen = new AtomicReference<>();
    try {
      await(what)
          .during(window)
          .atMost(window.plusSeconds(15))
          .pollInterval(Duration.ofSeconds(2))
          .until(
              () -> {
                if (seen.get() == null) {
                  seen.set(safe(change));
                }
                return seen.get() == null;
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(what + ": " + seen.get(), e);
    }
  }

  /**
   * When the pod's Ready condition last turned True (the API server's time, whole seconds), or
   * null.
   */
  static Instant readySince(Pod p) {
    return p.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()))
        .map(c -> Instant.parse(c.getLastTransitionTime()))
        .findFirst()
        .orElse(null);
  }

  /** What the workload's admin command printed (its result lines, not the HBase client's log). */
  static String said(Workload.Run r) {
    return r.log()
        .lines()
        .filter(l -> l.matches("^(decommission|recommission|decommissioned now).*"))
        .reduce((a, b) -> a + "; " + b)
        .orElse(r.log().strip());
  }

  /**
   * The workload client as an HBase administrator: decommission / recommission HOST_PREFIX..., or
   * decommissioned (the marks).
   */
  Workload.Run admin(String command, List<String> hostPrefixes) {
    List<String> args = new ArrayList<>(List.of(command));
    args.addAll(hostPrefixes);
    Workload.Run r = workload.run("e2e-admin", Duration.ofMinutes(3), args.toArray(String[]::new));
    assertThat(r.phase()).as("workload %s: %s", args, r.log()).isEqualTo("Succeeded");
    return r;
  }

  static long restarted(Map<Integer, Set<String>> uids) {
    return uids.values().stream().filter(s -> s.size() > 1).count();
  }

  static String sizes(Map<Integer, Set<String>> uids) {
    Map<Integer, Integer> m = new TreeMap<>();
    uids.forEach((k, v) -> m.put(k, v.size()));
    return m.toString();
  }

  /**
   * A client of its own that does not retry: fabric8 retries a 429 by itself (10 times, after the
   * Retry-After of 10 s the Eviction API sends), so evict() would block until the budget allows it
   * and look allowed at once.
   */
  KubernetesClient withoutRetries() {
    return new KubernetesClientBuilder()
        .withConfig(
            new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                .withRequestRetryBackoffLimit(0)
                .build())
        .build();
  }

  /**
   * Waits until the policy's PodDisruptionBudget allows {@code n} disruptions; returns its name.
   */
  String awaitDisruptionsAllowed(int n, String when, Duration atMost, Duration every) {
    String pdb = Cluster.POLICY + "-regionservers";
    await("PodDisruptionBudget " + pdb + " allows " + n + " disruptions " + when)
        .atMost(atMost)
        .pollInterval(every)
        .until(
            () -> {
              var b =
                  client
                      .policy()
                      .v1()
                      .podDisruptionBudget()
                      .inNamespace(cluster.ns)
                      .withName(pdb)
                      .get();
              return b != null
                  && b.getStatus() != null
                  && Integer.valueOf(n).equals(b.getStatus().getDisruptionsAllowed());
            });
    return pdb;
  }

  /** A shell script run on the kind node (as root, in the node's namespaces). */
  Shell.Result onNode(String script) {
    return Shell.run(
        settings.repo(),
        60,
        settings.env(),
        List.of("docker", "exec", settings.kindCluster() + "-control-plane", "sh", "-c", script));
  }

  /**
   * Shell for the kind node: sets $pid to the PID of the pod's RegionServer JVM as the node sees
   * it, or fails.
   */
  static String regionServerPid(String pod) {
    return "c=$(crictl ps -q --name regionserver --label io.kubernetes.pod.name="
        + pod
        + ") && [ -n \"$c\" ]"
        + " && pid=$(crictl inspect --output go-template --template '{{.info.pid}}' $c 2>/dev/null"
        + " || crictl inspect $c | grep -m1 '\"pid\":' | tr -dc 0-9) && [ -n \"$pid\" ]";
  }

  /** When an event was last seen (EPOCH if it carries no time). */
  static Instant eventTime(io.fabric8.kubernetes.api.model.Event e) {
    String at =
        e.getLastTimestamp() != null
            ? e.getLastTimestamp()
            : e.getEventTime() == null ? null : e.getEventTime().getTime();
    return at == null ? Instant.EPOCH : Instant.parse(at);
  }

  /** Events last seen at or after {@code t} (less 2 s: events carry whole seconds). */
  static java.util.function.Predicate<io.fabric8.kubernetes.api.model.Event> since(Instant t) {
    return e -> !eventTime(e).isBefore(t.minusSeconds(2));
  }
}
