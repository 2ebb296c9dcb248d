package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The kind cluster as the story sees it: the policy, the RegionServer StatefulSet with its pods and
 * cache PVCs, the policy's events and the operator (installed by e2e/kind/operator-up.sh).
 *
 * <p>Over ~400 lines because it is the suite's one reader of the cluster's objects: each method is
 * a small query or wait on them, and the scenario classes share them all.
 */
final class Cluster {
  static final String RS = "hbase-regionserver";

  /** The chart's HMaster pod (the policy's masterRef). */
  static final String MASTER_POD = "hbase-master-0";

  static final int REPLICAS = 3;
  static final String POLICY = "persistent-file";
  static final String CRD = "blockcachepolicies.cache.hbase.dev";

  final KubernetesClient client;
  final Settings settings;
  final String ns;

  /**
   * Where the operator runs: the suite's release, or (steps 18 and 19) the namespace-scoped one.
   */
  String opNs;

  String opRelease;

  Cluster(KubernetesClient client, Settings settings) {
    this.client = client;
    this.settings = settings;
    this.ns = settings.hbaseNamespace();
    this.opNs = settings.operatorNamespace();
    this.opRelease = settings.operatorRelease();
  }

  static String pod(int ordinal) {
    return RS + "-" + ordinal;
  }

  static int ordinalOf(String pod) {
    return Integer.parseInt(pod.substring(pod.lastIndexOf('-') + 1));
  }

  // ------------------------------------------------------------------ the policy

  Resource<BlockCachePolicy> policyResource() {
    return client.resources(BlockCachePolicy.class).inNamespace(ns).withName(POLICY);
  }

  BlockCachePolicy policy() {
    BlockCachePolicy p = policyResource().get();
    assertThat(p).as("policy %s", POLICY).isNotNull();
    return p;
  }

  BlockCachePolicy policyOrNull() {
    return policyResource().get();
  }

  /**
   * The user's edit, as `kubectl edit` makes it: on the latest version of the policy. The operator
   * writes the status while it rolls, so an edit based on a version read a moment earlier may meet
   * a conflict (409); like a user, the story reads the policy again and retries (CI failed step 9
   * once on such a conflict).
   */
  void editPolicy(Consumer<BlockCachePolicy> change) {
    for (int attempt = 1; ; attempt++) {
      try {
        policyResource()
            .edit(
                p -> {
                  change.accept(p);
                  return p;
                });
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 10) {
          throw e;
        }
      }
    }
  }

  String revision() {
    return policy().getStatus().getRollout().getRevision();
  }

  static TuningSpec tuning(BlockCachePolicy p) {
    return p.getSpec().getTuning() == null ? new TuningSpec() : p.getSpec().getTuning();
  }

  static Condition condition(BlockCachePolicy p, String type) {
    return p.getStatus() == null
        ? null
        : p.getStatus().getConditions().stream()
            .filter(c -> type.equals(c.getType()))
            .findFirst()
            .orElse(null);
  }

  static boolean isTrue(BlockCachePolicy p, String type) {
    Condition c = condition(p, type);
    return c != null && "True".equals(c.getStatus());
  }

  boolean crdEstablished() {
    CustomResourceDefinition c =
        client.apiextensions().v1().customResourceDefinitions().withName(CRD).get();
    return c != null
        && c.getStatus() != null
        && c.getStatus().getConditions().stream()
            .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus()));
  }

  /**
   * A roll to a revision other than {@code oldRevision} (null: any) is finished: phase Idle,
   * Ready=True, the spec observed, and every pod Ready with the revision's config hash.
   */
  boolean rollDone(BlockCachePolicy p, String oldRevision) {
    var st = p.getStatus();
    RolloutStatus ro = st.getRollout();
    if (ro.getPhase() != RolloutStatus.Phase.Idle
        || !isTrue(p, "Ready")
        || ro.getRevision() == null
        || ro.getRevision().equals(oldRevision)
        || !Objects.equals(st.getObservedGeneration(), p.getMetadata().getGeneration())) {
      return false;
    }
    for (int i = 0; i < REPLICAS; i++) {
      Pod pod = client.pods().inNamespace(ns).withName(pod(i)).get();
      if (pod == null
          || !PodWatch.ready(pod)
          || !ro.getRevision()
              .equals(pod.getMetadata().getAnnotations().get("cache.hbase.dev/config-hash"))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Polls the policy every 2 s until {@code until} holds for one that has a rollout status,
   * printing each change of the rollout; fails with the last status seen after {@code timeout}.
   */
  BlockCachePolicy awaitRollout(String what, Duration timeout, Predicate<BlockCachePolicy> until) {
    AtomicReference<BlockCachePolicy> last = new AtomicReference<>();
    AtomicReference<String> lastMsg = new AtomicReference<>("");
    try {
      await(what)
          .atMost(timeout)
          .pollInterval(Duration.ofSeconds(2))
          .ignoreExceptions()
          .until(
              () -> {
                BlockCachePolicy p = policy();
                last.set(p);
                if (p.getStatus() == null || p.getStatus().getRollout() == null) {
                  return false;
                }
                boolean done = until.test(p);
                RolloutStatus ro = p.getStatus().getRollout();
                String msg =
                    ro.getPhase()
                        + " "
                        + ro.getProgress()
                        + " "
                        + ro.getCurrentPod()
                        + " "
                        + (ro.getInFlight() == null || ro.getInFlight().isEmpty()
                            ? ""
                            : ro.getInFlight().get(0).getStep())
                        + " "
                        + ro.getMessage();
                if (!msg.equals(lastMsg.getAndSet(msg))) {
                  System.out.println("[e2e]   " + Instant.now() + " " + what + ": " + msg);
                }
                return done;
              });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      BlockCachePolicy p = last.get();
      throw new AssertionError(
          what
              + " did not happen within "
              + timeout
              + "; last status: "
              + (p == null ? "none" : Serialization.asYaml(p.getStatus())),
          e);
    }
    return last.get();
  }

  /**
   * {@link #awaitRollout} until the roll away from {@code oldRevision} is done ({@link #rollDone}).
   */
  BlockCachePolicy awaitRollDone(String what, String oldRevision, Duration timeout) {
    return awaitRollout(
        what + ": phase Idle, Ready=True, every pod on the new revision",
        timeout,
        p -> rollDone(p, oldRevision));
  }

  /**
   * Idle, Ready, and every pod created from the StatefulSet's current template, which is no longer
   * {@code oldUpdateRevision} (the StatefulSet controller has seen the change).
   */
  boolean templateRollDone(BlockCachePolicy p, String oldUpdateRevision) {
    RolloutStatus ro = p.getStatus().getRollout();
    StatefulSet sts = regionServers();
    if (ro.getPhase() != RolloutStatus.Phase.Idle
        || !isTrue(p, "Ready")
        || sts.getStatus() == null
        || !Objects.equals(
            sts.getStatus().getObservedGeneration(), sts.getMetadata().getGeneration())
        || sts.getStatus().getUpdateRevision() == null
        || sts.getStatus().getUpdateRevision().equals(oldUpdateRevision)) {
      return false;
    }
    for (int i = 0; i < REPLICAS; i++) {
      Pod pod = client.pods().inNamespace(ns).withName(pod(i)).get();
      if (pod == null
          || !PodWatch.ready(pod)
          || !sts.getStatus()
              .getUpdateRevision()
              .equals(pod.getMetadata().getLabels().get("controller-revision-hash"))) {
        return false;
      }
    }
    return true;
  }

  List<Event> policyEvents(Set<String> reasons) {
    return client.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(
            e -> e.getInvolvedObject() != null && POLICY.equals(e.getInvolvedObject().getName()))
        .filter(e -> reasons.contains(e.getReason()))
        .toList();
  }

  /**
   * The policy's events of these reasons once {@code enough} holds for them, or as they are after
   * 15 s: the operator sends events off its reconcile thread, so an event can come a moment after
   * the status it goes with.
   */
  List<Event> policyEvents(Set<String> reasons, Predicate<List<Event>> enough) {
    long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    List<Event> seen = policyEvents(reasons);
    while (!enough.test(seen) && System.nanoTime() < until) {
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      seen = policyEvents(reasons);
    }
    return seen;
  }

  /** Every event about a BlockCachePolicy in the HBase namespace, one per line. */
  String allPolicyEvents() {
    StringBuilder sb = new StringBuilder();
    client.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(
            e ->
                e.getInvolvedObject() != null
                    && "BlockCachePolicy".equals(e.getInvolvedObject().getKind()))
        .forEach(
            e ->
                sb.append(e.getLastTimestamp())
                    .append(' ')
                    .append(e.getType())
                    .append(' ')
                    .append(e.getReason())
                    .append(": ")
                    .append(e.getMessage())
                    .append('\n'));
    return sb.toString();
  }

  // ------------------------------------------------------------------ RegionServers

  StatefulSet regionServers() {
    return client.apps().statefulSets().inNamespace(ns).withName(RS).get();
  }

  ConfigMap derivedConfigMap() {
    return client.configMaps().inNamespace(ns).withName(POLICY + "-rs-site").get();
  }

  PersistentVolumeClaim cachePvc(String pod) {
    return client.persistentVolumeClaims().inNamespace(ns).withName("bucketcache-" + pod).get();
  }

  Map<Integer, String> podUids() {
    Map<Integer, String> out = new TreeMap<>();
    for (int i = 0; i < REPLICAS; i++) {
      Pod p = client.pods().inNamespace(ns).withName(pod(i)).get();
      out.put(i, p == null ? null : p.getMetadata().getUid());
    }
    return out;
  }

  Map<String, String> pvcUids() {
    Map<String, String> out = new TreeMap<>();
    for (int i = 0; i < REPLICAS; i++) {
      PersistentVolumeClaim c = cachePvc(pod(i));
      out.put("bucketcache-" + pod(i), c == null ? null : c.getMetadata().getUid());
    }
    return out;
  }

  // ------------------------------------------------------------------ the operator

  /**
   * e2e/kind/operator-up.sh with the suite's settings: the install make demo and make kind-operator
   * do.
   */
  Shell.Result installOperator() {
    return Shell.run(settings.repo(), 600, settings.env(), List.of("e2e/kind/operator-up.sh"));
  }

  Deployment operatorDeployment() {
    List<Deployment> ds =
        client
            .apps()
            .deployments()
            .inNamespace(opNs)
            .withLabel("app.kubernetes.io/instance", opRelease)
            .list()
            .getItems();
    assertThat(ds).as("operator Deployment").hasSize(1);
    return ds.get(0);
  }

  List<Pod> operatorPods() {
    Deployment d = operatorDeployment();
    return client
        .pods()
        .inNamespace(opNs)
        .withLabels(d.getSpec().getSelector().getMatchLabels())
        .list()
        .getItems();
  }

  Pod operatorPod() {
    List<Pod> pods =
        operatorPods().stream()
            .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
            .toList();
    assertThat(pods).as("operator pods").isNotEmpty();
    return pods.get(0);
  }

  void killOperatorPod(Pod op) {
    client
        .pods()
        .inNamespace(opNs)
        .withName(op.getMetadata().getName())
        .withGracePeriod(0)
        .delete();
  }

  String operatorLogs() {
    StringBuilder sb = new StringBuilder();
    for (Pod p : operatorPods()) {
      sb.append("==== ").append(p.getMetadata().getName()).append('\n');
      sb.append(
              KindScenario.safe(
                  () ->
                      client.pods().inNamespace(opNs).withName(p.getMetadata().getName()).getLog()))
          .append('\n');
    }
    return sb.toString();
  }

  /**
   * For a failure message: the RegionServer pods, the policy's per-server status and HBase's own
   * view (the shell's {@code status 'simple'}: regions and requests per server).
   */
  String describeRegionServers() {
    BlockCachePolicy p = policy();
    return kubectl("get", "pods", "-n", ns, "-o", "wide").output()
        + "\npolicy status.regionServers:\n"
        + KindScenario.safe(() -> Serialization.asYaml(p.getStatus().getRegionServers()))
        + "\nthe master's status page (text):\n"
        + masterStatus()
            .replaceAll("(?s)<script.*?</script>", "")
            .replaceAll("<[^>]*>", " ")
            .replaceAll("[ \t]+", " ")
            .replaceAll("(\\s*\\n)+", "\n");
  }

  /**
   * The active master's {@code /master-status} page (HTML), fetched inside its pod; "" when it
   * cannot be read.
   */
  String masterStatus() {
    Shell.Result r = masterInfo("/master-status");
    return r.code() == 0 ? r.output() : "";
  }

  /** A GET of {@code path} on the active master's info port, from inside its pod. */
  private Shell.Result masterInfo(String path) {
    return kubectl(
        "exec",
        "-n",
        ns,
        MASTER_POD,
        "--",
        "curl",
        "-sSf", // -S: curl's own error on a failure (an HTTP 500, a refused connection)
        "--max-time",
        "20",
        "http://127.0.0.1:16010" + path);
  }

  /**
   * The failed tries of the last {@link #balancerOn} ("" when its first try read the switch): how
   * many, and what the last one saw.
   */
  volatile String balancerUnread = "";

  /** {@link #balancerOn(Duration)} with 30 s of patience. */
  Boolean balancerOn() {
    return balancerOn(Duration.ofSeconds(30));
  }

  /**
   * HBase's balancer switch as the master's status page shows it (a warning while it is off), or
   * null when the page cannot be read within {@code patience} (one try when zero). A failed read is
   * tried again every 2 s: the page failed once in CI a few seconds into a roll (step 9,
   * 2026-11-28; the read is an observation, a null is not an answer). {@link #balancerUnread} keeps
   * the failed tries, also when a later one read it.
   */
  Boolean balancerOn(Duration patience) {
    Instant until = Instant.now().plus(patience);
    balancerUnread = "";
    for (int attempt = 1; ; attempt++) {
      Shell.Result r = masterInfo("/master-status");
      if (r.code() == 0 && r.output().contains("Region Servers")) {
        if (attempt > 1) {
          balancerUnread = "read at try " + attempt + "; " + balancerUnread;
        }
        return !r.output().contains("The Load Balancer is not enabled");
      }
      String text = r.output().replaceAll("(?s)<script.*?</script>", "").replaceAll("<[^>]*>", " ");
      text = text.replaceAll("\\s+", " ").trim();
      balancerUnread =
          String.format(
              "the master's status page unread at try %d: curl exit %d, %s",
              attempt, r.code(), text.length() > 300 ? text.substring(0, 300) + "..." : text);
      long left = Duration.between(Instant.now(), until).toMillis();
      if (left <= 0) {
        return null;
      }
      try {
        Thread.sleep(Math.min(2000, left));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
  }

  /**
   * The master's decommissioned ("draining") RegionServers, from its /jmx ({@code
   * Master,sub=Server}: tag.drainingRegionServers, as HBase 2.6 names it), or null when it cannot
   * be read.
   */
  String drainingRegionServers() {
    Shell.Result r = masterInfo("/jmx?qry=Hadoop:service=HBase,name=Master,sub=Server");
    if (r.code() != 0) {
      return null;
    }
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"tag\\.drainingRegionServers\"\\s*:\\s*\"([^\"]*)\"")
            .matcher(r.output());
    return m.find() ? m.group(1) : null;
  }

  /**
   * {@code helm --kube-context "$KUBE_CONTEXT" <args>} through e2e/kind/lib.sh, so that {@code
   * args} may name the suite's releases and namespaces as its shell variables ({@code
   * $HBASE_RELEASE}, {@code $HBASE_NAMESPACE}, ...).
   */
  Shell.Result helm(long timeoutSeconds, String args) {
    return Shell.run(
        settings.repo(),
        timeoutSeconds,
        settings.env(),
        List.of(
            "bash", "-c", ". e2e/kind/lib.sh && helm --kube-context \"$KUBE_CONTEXT\" " + args));
  }

  Shell.Result kubectl(String... args) {
    List<String> cmd =
        new java.util.ArrayList<>(List.of("kubectl", "--context", settings.context()));
    cmd.addAll(List.of(args));
    return Shell.run(settings.repo(), 60, cmd);
  }
}
