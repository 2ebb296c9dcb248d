package dev.hbase.cache.e2e;

import static dev.hbase.cache.e2e.Cluster.MASTER_POD;
import static dev.hbase.cache.e2e.Cluster.REPLICAS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The suite's preconditions ({@link Need}), for the scenario classes' {@link KindScenario#needs()}.
 * Each checks what a class starts from with a few reads (the class before it normally leaves it
 * so), and establishes it the way an administrator would when it does not hold. List them in this
 * order (each may rely on the ones before it): {@link #HBASE_UP}, an operator ({@link
 * #SUITE_OPERATOR} or {@link #AN_OPERATOR}), the policy ({@link #suitePolicy}), {@link #READER},
 * {@link #GIVEN_BACK}, {@link #WARM}.
 *
 * <p>Over ~400 lines because it is the one catalogue of what the classes start from: each need is a
 * check and its remedy, side by side.
 */
final class Needs {
  private Needs() {}

  /** The bound of a roll a precondition waits for (one normally takes 1-2 min here). */
  static final Duration ROLL_BOUND = Duration.ofMinutes(10);

  /** The share of a RegionServer's data reads from cache for {@link #WARM}. */
  static final double WARM_RATIO = 0.9;

  /** The window {@link #WARM} judges each RegionServer's reads over. */
  static final Duration WARM_WINDOW = Duration.ofSeconds(30);

  // ---------------------------------------------------------------------- HBase

  /** The HMaster and the three RegionServers Ready, the StatefulSet at three replicas. */
  static final Need HBASE_UP =
      Need.of(
          "HBase up (the HMaster and " + REPLICAS + " RegionServers Ready)",
          Needs::hbaseDown,
          s -> {
            StatefulSet sts = s.cluster.regionServers();
            if (sts != null && !Integer.valueOf(REPLICAS).equals(sts.getSpec().getReplicas())) {
              s.client
                  .apps()
                  .statefulSets()
                  .inNamespace(s.cluster.ns)
                  .withName(Cluster.RS)
                  .scale(REPLICAS);
            }
            await("HBase up")
                .atMost(Duration.ofMinutes(5))
                .pollInterval(Duration.ofSeconds(2))
                .ignoreExceptions()
                .until(() -> hbaseDown(s) == null);
          });

  static String hbaseDown(KindScenario s) {
    Pod master = s.client.pods().inNamespace(s.cluster.ns).withName(MASTER_POD).get();
    if (master == null || !PodWatch.ready(master)) {
      return MASTER_POD + (master == null ? " is gone" : " is not Ready");
    }
    StatefulSet sts = s.cluster.regionServers();
    if (sts == null) {
      return "there is no StatefulSet " + Cluster.RS;
    }
    if (!Integer.valueOf(REPLICAS).equals(sts.getSpec().getReplicas())) {
      return Cluster.RS + " has " + sts.getSpec().getReplicas() + " replicas";
    }
    List<String> notReady =
        IntStream.range(0, REPLICAS)
            .mapToObj(Cluster::pod)
            .filter(
                p -> {
                  Pod pod = s.client.pods().inNamespace(s.cluster.ns).withName(p).get();
                  return pod == null || !PodWatch.ready(pod);
                })
            .toList();
    return notReady.isEmpty() ? null : "not Ready: " + notReady;
  }

  /** HBase's balancer on and no decommission mark: what the operator gives back after any roll. */
  static final Need GIVEN_BACK =
      Need.of(
          "HBase given back (its balancer on, no decommission mark)",
          Needs::notGivenBack,
          s -> {
            // the operator's own give-back first (its durable record: a minute is plenty)
            try {
              await("HBase given back by the operator")
                  .atMost(Duration.ofSeconds(60))
                  .pollInterval(Duration.ofSeconds(2))
                  .until(() -> notGivenBack(s) == null);
            } catch (org.awaitility.core.ConditionTimeoutException e) {
              // then as an administrator would: the switch on, every mark cleared
              Workload.Run r = s.workload.run("e2e-admin", Duration.ofMinutes(3), "give-back");
              s.report.line("  - the workload's give-back: %s", FaultScenario.said(r));
              assertThat(r.phase()).as("workload give-back: %s", r.log()).isEqualTo("Succeeded");
            }
          });

  static String notGivenBack(KindScenario s) {
    Boolean on = s.cluster.balancerOn(Duration.ZERO);
    if (on == null) {
      return "HBase's balancer switch could not be read (" + s.cluster.balancerUnread + ")";
    }
    if (!on) {
      return "HBase's balancer is off";
    }
    String marks = s.cluster.drainingRegionServers();
    if (marks == null) { // not in this HBase's metrics: ask through the Admin API
      marks =
          FaultScenario.said(s.workload.run("e2e-admin", Duration.ofMinutes(3), "decommissioned"));
      marks = marks.replaceAll("^.*\\[(.*)\\].*$", "$1");
    }
    return marks.isBlank() ? null : "decommissioned RegionServers: " + marks;
  }

  /**
   * Every RegionServer holds regions and served at least {@link #WARM_RATIO} of its data reads from
   * cache over the last {@link #WARM_WINDOW} (the suite's own /jmx samples): what a step that
   * asserts caches kept starts from. Established as a step would: every server given its share of
   * the table (scanned once there), then every L2 settled and the reads cached again.
   */
  static final Need WARM =
      Need.of(
          "caches warm (every RegionServer holds regions, >= "
              + WARM_RATIO
              + " of its reads cached)",
          Needs::cold,
          s -> {
            s.everyServerHoldsRegions();
            s.awaitEveryPodCached(Duration.ofMinutes(5));
            await("every RegionServer's reads cached")
                .atMost(Duration.ofMinutes(2))
                .pollInterval(Duration.ofSeconds(5))
                .until(() -> cold(s) == null);
          });

  static String cold(KindScenario s) {
    Instant now = Instant.now();
    List<String> cold = new ArrayList<>();
    for (int i = 0; i < REPLICAS; i++) {
      String pod = Cluster.pod(i);
      Optional<Jmx> last = s.sampler.at(pod, now);
      Double ratio = s.sampler.ratio(pod, now.minus(WARM_WINDOW), now);
      if (last.isEmpty() || last.get().at().isBefore(now.minusSeconds(20))) {
        cold.add(pod + ": no /jmx sample in 20 s");
      } else if (last.get().regionCount() <= 0) {
        cold.add(pod + ": holds no region");
      } else if (ratio == null) {
        cold.add(pod + ": no data read in " + WARM_WINDOW.toSeconds() + " s");
      } else if (ratio < WARM_RATIO) {
        cold.add(String.format(java.util.Locale.ROOT, "%s: %.3f of its reads cached", pod, ratio));
      }
    }
    return cold.isEmpty() ? null : String.join("; ", cold);
  }

  // ---------------------------------------------------------------------- the operator

  /** The suite's cluster-wide operator (e2e/kind/operator-up.sh) installed, Ready, and active. */
  static final Need SUITE_OPERATOR =
      Need.of(
          "the suite's cluster-wide operator",
          s ->
              s.cluster.opRelease.equals(s.settings.operatorRelease())
                  ? operatorNotReady(s)
                  : "the operator installed now is release "
                      + s.cluster.opRelease
                      + " in "
                      + s.cluster.opNs,
          Needs::installTheSuitesOperator);

  /** An operator (the suite's, or the namespace-scoped one of {@link NamespaceInstall}) Ready. */
  static final Need AN_OPERATOR =
      Need.of("an operator", Needs::operatorNotReady, Needs::installTheSuitesOperator);

  static String operatorNotReady(KindScenario s) {
    if (!s.cluster.crdEstablished()) {
      return "CRD " + Cluster.CRD + " not established";
    }
    List<Deployment> ds =
        s.client
            .apps()
            .deployments()
            .inNamespace(s.cluster.opNs)
            .withLabel("app.kubernetes.io/instance", s.cluster.opRelease)
            .list()
            .getItems();
    if (ds.size() != 1) {
      return ds.size() + " operator Deployments of release " + s.cluster.opRelease;
    }
    Integer ready = ds.get(0).getStatus() == null ? null : ds.get(0).getStatus().getReadyReplicas();
    return ready != null && ready >= 1 ? null : "the operator Deployment is not Ready";
  }

  /**
   * The namespace-scoped operator out (two operators would both act on a policy), the suite's in
   * (the install of step 1), and the host's Prometheus following its chart.
   */
  static void installTheSuitesOperator(KindScenario s) throws Exception {
    if (s.cluster.helm(60, "status " + NamespaceInstall.RELEASE + " -n " + s.cluster.ns).code()
        == 0) {
      Shell.Result un =
          s.cluster.helm(
              300,
              "uninstall "
                  + NamespaceInstall.RELEASE
                  + " -n "
                  + s.cluster.ns
                  + " --wait --timeout 3m");
      assertThat(un.code())
          .as("helm uninstall %s: %s", NamespaceInstall.RELEASE, un.output())
          .isZero();
    }
    Shell.Result up = s.cluster.installOperator();
    assertThat(up.code()).as("e2e/kind/operator-up.sh: %s", up.output()).isZero();
    s.cluster.opNs = s.settings.operatorNamespace();
    s.cluster.opRelease = s.settings.operatorRelease();
    await("the suite's operator Ready")
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofSeconds(2))
        .ignoreExceptions()
        .until(() -> operatorNotReady(s) == null);
    follow(s);
  }

  /** The host's Prometheus follows the suite's operator chart (step 1 does it too). */
  static List<String> follow(KindScenario s) throws Exception {
    List<String> followed =
        s.prometheus.followTheChart(s.client, s.cluster.opNs, s.settings.operatorRelease());
    s.suite.prometheusFollowing = Instant.now();
    return followed;
  }

  // ---------------------------------------------------------------------- the suite's policy

  /**
   * The suite's PersistentFile policy ({@link Cluster#POLICY}) with the spec it was created with
   * ({@link Suite#baseline}) but for tuning.writerThreads, which is none of {@code rollsTo} (the
   * values the class's steps roll to), its roll done (Idle, Ready, every pod on its revision), not
   * Degraded, and no other policy on the RegionServers. Established: the other policies deleted,
   * the suite's created (as step 2 does) or its spec put back; then its roll.
   */
  static Need suitePolicy(Integer... rollsTo) {
    Set<Integer> avoid = Set.of(rollsTo);
    return Need.of(
        "the suite's policy", s -> policyUnmet(s, avoid), s -> putThePolicyBack(s, avoid));
  }

  static String policyUnmet(KindScenario s, Set<Integer> rollsTo) {
    List<String> others = otherPolicies(s);
    if (!others.isEmpty()) {
      return "other policies on the RegionServers: " + others;
    }
    BlockCachePolicy p = s.cluster.policyOrNull();
    if (p == null) {
      return "there is none";
    }
    if (s.suite.baseline == null) {
      return "it was not created by this run";
    }
    List<String> d = Baseline.differences(s.suite.baseline.getSpec(), p.getSpec());
    if (!d.isEmpty()) {
      return "its spec differs: " + d;
    }
    Integer w = writerThreads(p.getSpec());
    if (w != null && rollsTo.contains(w)) {
      return "tuning.writerThreads is " + w + ", a value a step of the class rolls to";
    }
    Condition degraded = Cluster.condition(p, "Degraded");
    if (degraded != null && "True".equals(degraded.getStatus())) {
      return "Degraded: " + degraded.getReason() + ": " + degraded.getMessage();
    }
    if (p.getStatus() == null
        || p.getStatus().getRollout() == null
        || !s.cluster.rollDone(p, null)) {
      var ro = p.getStatus() == null ? null : p.getStatus().getRollout();
      return "its roll is not done: "
          + (ro == null ? "no rollout status" : ro.getPhase() + " " + ro.getMessage());
    }
    return null;
  }

  static void putThePolicyBack(KindScenario s, Set<Integer> rollsTo) {
    for (String other : otherPolicies(s)) {
      s.deletePolicy(other);
    }
    BlockCachePolicy p = s.cluster.policyOrNull();
    if (p != null && s.suite.baseline == null) {
      s.deletePolicy(Cluster.POLICY);
      p = null;
    }
    if (p == null) {
      Baseline.create(s, Baseline.suitePolicy(s));
      s.cluster.awaitRollDone("the suite's policy created", null, ROLL_BOUND);
      return;
    }
    s.cluster.editPolicy(
        x -> {
          Integer w = writerThreads(x.getSpec());
          BlockCachePolicySpec spec = Serialization.clone(s.suite.baseline.getSpec());
          if (spec.getTuning() == null) {
            spec.setTuning(new TuningSpec());
          }
          spec.getTuning()
              .setWriterThreads(w != null && rollsTo.contains(w) ? unused(rollsTo, w) : w);
          x.setSpec(spec);
        });
    s.cluster.awaitRollDone("the suite's policy back to its spec", null, ROLL_BOUND);
  }

  /** Policies in the HBase namespace other than the suite's: one policy per StatefulSet. */
  static List<String> otherPolicies(KindScenario s) {
    return s
        .client
        .resources(BlockCachePolicy.class)
        .inNamespace(s.cluster.ns)
        .list()
        .getItems()
        .stream()
        .map(p -> p.getMetadata().getName())
        .filter(n -> !Cluster.POLICY.equals(n))
        .collect(Collectors.toList());
  }

  static Integer writerThreads(BlockCachePolicySpec spec) {
    return spec.getTuning() == null ? null : spec.getTuning().getWriterThreads();
  }

  /** A writerThreads value neither in {@code avoid} nor {@code now}: one no step rolls to. */
  static int unused(Set<Integer> avoid, Integer now) {
    return IntStream.rangeClosed(5, 64)
        .filter(v -> !avoid.contains(v) && !Integer.valueOf(v).equals(now))
        .findFirst()
        .orElseThrow();
  }

  /**
   * The namespace step's start: the suite's policy as {@link #suitePolicy} says, or deleted by this
   * run (step 16, mid-roll) with every pod Ready on its configuration (but for tuning.writerThreads
   * on a pod its roll had restarted: the takeover roll restarts every pod) and no other policy on
   * them: the namespace-scoped operator takes over those pods with it.
   */
  static final Need SUITE_POLICY_OR_ITS_PODS =
      Need.of(
          "the suite's policy, or its pods as its deletion left them",
          s ->
              s.cluster.policyOrNull() == null
                      && s.suite.deletedSuitePolicy != null
                      && s.suite.deletedSuitePolicyIdle
                      && otherPolicies(s).isEmpty()
                  ? null
                  : policyUnmet(s, Set.of()),
          s -> putThePolicyBack(s, Set.of()));

  // ---------------------------------------------------------------------- the reader

  /**
   * The table loaded and the suite's reader reading it (a successful read in the last 30 s).
   * Established: the table loaded (step 3's load) when it is not, the reader (re)started, the log
   * of one that stopped saved beside the report.
   */
  static final Need READER =
      Need.of(
          "the reader",
          Needs::readerUnmet,
          s -> {
            if (!s.suite.tableLoaded) {
              Workload.Run load = Baseline.loadTable(s);
              assertThat(s.suite.tableLoaded).as("the table loaded: %s", load.log()).isTrue();
              s.workload.delete("e2e-load");
            }
            String old = KindScenario.safe(() -> s.workload.log(KindScenario.READER));
            if (old != null && !old.isEmpty()) {
              Files.writeString(s.target.resolve("reader-before-" + s.outcome.name + ".log"), old);
            }
            Baseline.startReader(s);
            // its first seconds in its log (it prints READER START before its first read)
            await("the reader's first successful reads")
                .atMost(Duration.ofMinutes(1))
                .pollInterval(Duration.ofSeconds(2))
                .ignoreExceptions()
                .until(() -> readerUnmet(s) == null);
          });

  static String readerUnmet(KindScenario s) {
    if (!s.suite.tableLoaded) {
      return "the table is not loaded";
    }
    if (s.suite.readerStart == null) {
      return "no reader started";
    }
    Pod r = s.client.pods().inNamespace(s.cluster.ns).withName(KindScenario.READER).get();
    if (r == null || r.getStatus() == null || !"Running".equals(r.getStatus().getPhase())) {
      return "the reader pod is " + (r == null ? "gone" : r.getStatus().getPhase());
    }
    Instant now = Instant.now();
    Workload.Stats last =
        Workload.stats(s.workload.log(KindScenario.READER), now.minusSeconds(30), now);
    return last.ok() > 0
        ? null
        : "no successful read in the last 30 s (" + last.fail() + " failed)";
  }

  // ---------------------------------------------------------------------- Prometheus

  /**
   * The host's Prometheus has followed the suite's operator chart through at least one roll (the
   * dashboard's roll panels need one). Established: it follows the chart, and the suite's policy
   * rolls once (created, or its writerThreads changed).
   */
  static final Need PROMETHEUS_SAW_A_ROLL =
      Need.of(
          "the host's Prometheus scraped a roll",
          s ->
              s.suite.prometheusFollowing == null
                  ? "it does not follow the operator chart"
                  : s.suite.lastRollEnd == null
                          || !s.suite.lastRollEnd.isAfter(s.suite.prometheusFollowing)
                      ? "no roll since it follows the chart"
                      : null,
          s -> {
            if (s.suite.prometheusFollowing == null) {
              follow(s);
            }
            if (s.cluster.policyOrNull() == null || !otherPolicies(s).isEmpty()) {
              putThePolicyBack(s, Set.of());
            } else {
              String old = s.cluster.revision();
              s.cluster.editPolicy(
                  x ->
                      x.getSpec()
                          .setTuning(
                              Cluster.tuning(x)
                                  .setWriterThreads(unused(Set.of(), writerThreads(x.getSpec())))));
              s.cluster.awaitRollDone("a roll for Prometheus", old, ROLL_BOUND);
            }
            s.suite.lastRollEnd = Instant.now();
          });

  // ---------------------------------------------------------------------- for the proof

  /**
   * A precondition that never holds and cannot be established ({@link
   * KindSuite#BREAK_PRECONDITION}): shows on a cluster that its class is reported as not run and
   * the next class runs.
   */
  static Need broken(String knob) {
    return Need.of(
        "a precondition broken on purpose (" + knob + ")",
        s -> "broken on purpose",
        s -> {
          throw new IllegalStateException(
              "it cannot be established: " + knob + " names this class");
        });
  }
}
