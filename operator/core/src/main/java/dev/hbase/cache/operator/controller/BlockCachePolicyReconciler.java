package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.connection.HBaseClusters;
import dev.hbase.cache.operator.connection.HBaseConnector;
import dev.hbase.cache.operator.controller.ApplyStep.NotOwned;
import dev.hbase.cache.operator.controller.ApplyStep.Recreating;
import dev.hbase.cache.operator.controller.ApplyStep.SiteTooLarge;
import dev.hbase.cache.operator.controller.ApplyStep.StorageBlocked;
import dev.hbase.cache.operator.controller.ApplyStep.TargetPatched;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.controller.Observation.Unobservable;
import dev.hbase.cache.operator.controller.Observation.Why;
import dev.hbase.cache.operator.controller.PlanStep.Planned;
import dev.hbase.cache.operator.controller.PlanStep.Refused;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.metrics.InfoAsker;
import dev.hbase.cache.operator.metrics.InfoServers;
import dev.hbase.cache.operator.metrics.MetricsCollector;
import dev.hbase.cache.operator.metrics.PolicyMetrics;
import dev.hbase.cache.operator.metrics.ScrapePool;
import dev.hbase.cache.operator.metrics.SecuredProbes;
import dev.hbase.cache.operator.plan.JvmOptions;
import dev.hbase.cache.operator.roll.Roller;
import dev.hbase.cache.operator.roll.Zone;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a BlockCachePolicy, one named step after the other:
 *
 * <ol>
 *   <li>observe ({@link Observer}): the StatefulSet, base ConfigMap and pods from the informers;
 *   <li>plan ({@link PlanStep}): the memory plan, derived hbase-site and revision, or a refusal;
 *   <li>apply ({@link ApplyStep}): derived ConfigMaps, cache volume, StatefulSet fields, master;
 *   <li>identity and info servers ({@link CredentialsStep}, {@link InfoServersStep}): the Kerberos
 *       login and how the RegionServers' /jmx is read, or a refusal (no roll starts; without an
 *       identity HBase is sent nothing, without readable info servers a roll under way is held);
 *   <li>roll ({@link RollStep}): one {@link Roller} step and its actions;
 *   <li>status ({@link StatusAggregator}, {@link MetricsCollector}, {@link RecommendStep}):
 *       conditions, hit ratios and sizing advice, written once, also when a step throws ({@link
 *       #updateErrorStatus}).
 * </ol>
 *
 * An invalid policy touches nothing. Over ~400 lines (about 550): the reconcile's page of steps,
 * its namespace's share of the threads, its cleanup (the finalizer, giving HBase back), the event
 * sources JOSDK asks of the reconciler itself and its two constructors' documented parameters; each
 * step is its own class.
 */
// Every update passes through PolicyChanges instead of JOSDK's generation filter: the manual
// restart annotation starts a roll at once.
@ControllerConfiguration(
    name = BlockCachePolicyReconciler.NAME,
    generationAwareEventProcessing = false,
    informer = @Informer(onUpdateFilter = PolicyChanges.class))
// A failing reconcile is retried without end (2 s, x1.5, at most every 60 s): a roll in progress
// must never be left because the framework gave up after its default 5 attempts.
@GradualRetry(maxAttempts = -1, maxInterval = 60_000)
public class BlockCachePolicyReconciler
    implements Reconciler<BlockCachePolicy>, Cleaner<BlockCachePolicy> {
  public static final String NAME = "blockcachepolicy";

  private static final Logger log = LoggerFactory.getLogger(BlockCachePolicyReconciler.class);

  private static final Duration INVALID_REQUEUE = Duration.ofSeconds(60);
  private static final Duration RECREATE_REQUEUE = Duration.ofSeconds(2);
  private static final Duration RETRY_ACTION = Duration.ofSeconds(5);

  private final Clock clock;
  private final JvmOptions.Trust jvmTrust;
  private final Events events;
  private final StorageManager storage;
  private final HBaseClusters clusters;
  private final MetricsCollector metrics;
  private final RollStep roll;
  private final ReleaseStep release;
  private final String clusterDomain;
  private final RecommendStep recommend;
  private final ApplyStep apply;
  private final DisruptionBudgetStep disruptionBudget;
  private final StatusWrites writes = new StatusWrites();
  private final CredentialsStep credentials;
  private final InfoServersStep infoServers;
  final NamespaceShare share = new NamespaceShare();

  /**
   * The one field set late: JOSDK calls {@link #prepareEventSources} after this reconciler is made
   * and registered, and the informers exist only from there (they are built from its
   * EventSourceContext), before any reconcile. Each reconcile hands them to the steps in its {@link
   * PolicyContext}. Volatile: {@link #policies()} reads it on the /metrics thread, and null there
   * means a standby that does not lead yet.
   */
  private volatile Informers informers;

  public BlockCachePolicyReconciler(Clock clock, HBaseConnector connector, CacheProbe probe) {
    this(
        clock,
        connector,
        probe,
        JvmOptions.Trust.ALLOW_LIST,
        () -> true,
        SecuredProbes.jmx(Duration.ofSeconds(5)),
        DEFAULT_CLUSTER_DOMAIN);
  }

  /** The cluster's DNS domain when the chart names none. */
  public static final String DEFAULT_CLUSTER_DOMAIN = "cluster.local";

  /**
   * @param probe reads a RegionServer's /jmx over plain HTTP
   * @param jvmTrust which jvm.extraOptions policies may add ({@link JvmOptions}; the chart's {@code
   *     allowJvmAgents} and {@code allowAnyJvmOptions}, both off by default: the allow-list)
   * @param leading whether this operator holds its leader lease now: the roll's actions are fenced
   *     by it ({@link RollStep})
   * @param secured the probes for info servers over HTTPS (spec.hbase.tls)
   * @param clusterDomain the cluster's DNS domain: a pod of a policy with spec.hbase.tls must prove
   *     it is {@code <pod>.<serviceName>.<namespace>.svc.<clusterDomain>}
   */
  public BlockCachePolicyReconciler(
      Clock clock,
      HBaseConnector connector,
      CacheProbe probe,
      JvmOptions.Trust jvmTrust,
      BooleanSupplier leading,
      SecuredProbes secured,
      String clusterDomain) {
    this(
        clock,
        connector,
        probe,
        jvmTrust,
        leading,
        secured,
        clusterDomain,
        System.getenv("POD_NAMESPACE"));
  }

  /**
   * @param operatorNamespace the operator's own namespace, where it keeps the record of its
   *     StatefulSet recreates ({@link RecreateLedger}); null: its client's namespace
   */
  public BlockCachePolicyReconciler(
      Clock clock,
      HBaseConnector connector,
      CacheProbe probe,
      JvmOptions.Trust jvmTrust,
      BooleanSupplier leading,
      SecuredProbes secured,
      String clusterDomain,
      String operatorNamespace) {
    this.storage = new StorageManager(new RecreateLedger(operatorNamespace));
    this.jvmTrust = jvmTrust;
    this.clock = clock;
    this.events = new Events(clock);
    this.clusters = new HBaseClusters(connector);
    this.credentials =
        new CredentialsStep(
            new dev.hbase.cache.operator.connection.KerberosIdentities(clusters::closeAll));
    // one pool of threads for every policy's info servers, shared out by namespace
    InfoAsker asker = new InfoAsker(new ScrapePool());
    this.metrics = new MetricsCollector(asker);
    this.infoServers = new InfoServersStep(probe, secured, clusterDomain, asker);
    this.roll = new RollStep(clusters, metrics, events, leading, System::nanoTime, clusterDomain);
    this.release = new ReleaseStep(clusters, events, clusterDomain);
    this.clusterDomain = clusterDomain;
    this.recommend = new RecommendStep(events, jvmTrust);
    this.apply = new ApplyStep(storage, events);
    this.disruptionBudget = new DisruptionBudgetStep(events);
  }

  // ------------------------------------------------------------------ watches

  @Override
  public List<EventSource<?, BlockCachePolicy>> prepareEventSources(
      EventSourceContext<BlockCachePolicy> ctx) {
    Informers in = Informers.of(ctx);
    informers = in;
    return in.eventSources();
  }

  // ------------------------------------------------------------------ reconcile

  /**
   * A reconcile within its namespace's share of the threads ({@link NamespaceShare}); beyond it,
   * nothing is read or written and the policy comes back a second later.
   */
  @Override
  public UpdateControl<BlockCachePolicy> reconcile(
      BlockCachePolicy policy, Context<BlockCachePolicy> ctx) {
    String namespace = policy.getMetadata().getNamespace();
    if (!share.enter(namespace)) {
      return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(share.retryAfter());
    }
    try {
      return admitted(policy, ctx);
    } finally {
      share.exit(namespace);
    }
  }

  /** Reconciles turned away because their namespace's share was taken, since the start. */
  public long reconcilesTurnedAway() {
    return share.turnedAway();
  }

  private UpdateControl<BlockCachePolicy> admitted(
      BlockCachePolicy policy, Context<BlockCachePolicy> ctx) {
    PolicyContext c = new PolicyContext(policy, ctx.getClient(), informers, clock.instant());
    KubernetesClient client = c.client();
    StatusAggregator status = new StatusAggregator(policy, c.now());
    String orphaned = c.target().map(status::recreateDone).orElse(null);
    if (orphaned != null) {
      events.warn(
          client,
          policy,
          Why.UntrustedBackup,
          "status.recreate holds StatefulSet "
              + orphaned
              + ", deleted (orphan) for a recreate and not created again, but the policy's target"
              + " is now "
              + policy.getSpec().getTargetRef().getName()
              + ": set targetRef.name back to "
              + orphaned
              + " to finish it");
    }

    // a recreate interrupted between its delete and its create is finished here, or refused
    Observation seen =
        storage.finishInterrupted(
            client, policy, Observer.observe(c, new Zone(c.namespace(), clusterDomain)));
    if (seen instanceof Unobservable u) {
      if (u.why().invalid) {
        events.warn(client, policy, u.why(), u.message());
        if (u.why() != Why.Conflict) { // a conflicting policy never rolled anything
          hold(c, status, null, u.why());
        }
      }
      return write(
          ctx,
          policy,
          status.unobservable(u),
          u.why().invalid ? INVALID_REQUEUE : RECREATE_REQUEUE);
    }
    Observed observed = (Observed) seen;
    for (var r : observed.cacheMapRemovals()) {
      events.once(
          client,
          policy,
          r.pod(),
          r.reason() != Reason.EmptyCacheMapRemoved, // an empty map is HBase's own doing
          r.reason(),
          r.pod() + " (cache-map-guard " + r.when() + ", " + r.at() + "): " + r.message());
    }

    PlanStep.Result result =
        PlanStep.plan(observed, status.previousPlan(), status.masterVersion(), jvmTrust);
    if (result instanceof Refused r) {
      events.warn(client, policy, r.reason(), r.message());
      hold(c, status, observed, r.reason());
      return write(ctx, policy, status.invalid(r.reason(), r.message()), INVALID_REQUEUE);
    }
    Planned planned = (Planned) result;
    if (!planned.cacheResets().isEmpty()) {
      // a new plan that throws away persisted caches: say so before the first pod restarts
      events.warn(
          client, policy, Reason.CacheResetPending, StatusAggregator.cacheResetMessage(planned));
    }
    status.planned(planned);
    RecommendStep.followed(status.status(), policy.getSpec(), planned.plan());

    ApplyStep.Outcome applied = apply.apply(c, observed, planned, status.status());
    // a refusal here holds a roll under way like every other: the balancer back as it was, a
    // drained server given its regions back, until the refusal is gone (issue 50, point 4)
    if (applied instanceof StorageBlocked b) {
      hold(c, status, observed, Reason.StorageBlocked);
      return write(ctx, policy, status.storageBlocked(b.message()), INVALID_REQUEUE);
    }
    if (applied instanceof SiteTooLarge t) {
      events.warn(client, policy, Reason.SiteConfigTooLarge, t.message());
      hold(c, status, observed, Reason.SiteConfigTooLarge);
      return write(
          ctx, policy, status.blocked(Reason.SiteConfigTooLarge, t.message()), INVALID_REQUEUE);
    }
    if (applied instanceof NotOwned n) {
      events.warn(client, policy, Reason.ObjectNotOwned, n.message());
      hold(c, status, observed, Reason.ObjectNotOwned);
      return write(
          ctx, policy, status.notOwned(Reason.ObjectNotOwned, n.message()), INVALID_REQUEUE);
    }
    if (applied instanceof Recreating r) {
      return write(ctx, policy, status.recreating(r.message()), RECREATE_REQUEUE);
    }
    String budgetNotOwned = disruptionBudget.apply(c, observed.target());
    if (applied instanceof TargetPatched) {
      // the roll decides on the StatefulSet as written and as its controller answered, not on
      // the template just overwritten: one more look before any restart
      return write(ctx, policy, status, RECREATE_REQUEUE);
    }

    CredentialsStep.Result identity = credentials.resolve(c);
    if (identity instanceof CredentialsStep.Refused r) {
      // no identity for HBase: nothing is sent to it and no pod restarts until there is one
      events.warn(client, policy, r.reason(), r.message());
      return write(ctx, policy, status.blocked(r.reason(), r.message()), INVALID_REQUEUE);
    }
    InfoServersStep.Result reading =
        infoServers.resolve(c, observed, CredentialsStep.login(identity));
    if (reading instanceof InfoServersStep.Refused r) {
      // no server's cache can be read: a roll would restart pods without its warm gate; one
      // under way gives the cluster back meanwhile (balancer, drained servers)
      events.warn(client, policy, r.reason(), r.message());
      hold(c, status, observed, r.reason());
      return write(ctx, policy, status.blocked(r.reason(), r.message()), INVALID_REQUEUE);
    }
    InfoServers info = ((InfoServersStep.Access) reading).info();
    RollStep.Rolled rolled =
        roll.roll(
            c,
            observed,
            planned,
            status.rollout(),
            status.cacheResetPending(),
            CredentialsStep.login(identity),
            info);
    // a new version seen: the master keys it decides are written at the next reconcile, soon
    boolean newVersion = status.masterSeen(rolled.masterVersion());
    if (rolled.wrongLine() != null) {
      // the HMaster's line cannot run the plan: blocked until the spec or HBase changes
      rolled.decision().ifPresent(status::held);
      return write(
          ctx,
          policy,
          status.blocked(Reason.HBaseVersionMismatch, rolled.wrongLine()),
          newVersion ? RECREATE_REQUEUE : INVALID_REQUEUE);
    }
    Optional<Roller.Decision> d = rolled.decision();
    if (d.isEmpty()) {
      if (rolled.refused() != null) {
        // HBase refused the policy's identity an action: it fails again until a grant
        status.degraded(Reason.AccessDenied, rolled.refused());
      }
      return write(ctx, policy, status, RETRY_ACTION); // an action failed: the same step again
    }
    status.rolled(d.get());
    if (budgetNotOwned != null) {
      // the roll goes on, without a budget of ours
      status.degraded(Reason.ObjectNotOwned, budgetNotOwned);
    }

    var intervals =
        metrics.update(
            policy,
            info,
            status.status(),
            observed.pods(),
            RecommendStep.enabled(policy.getSpec()),
            c.now());
    String stalled = metrics.stalled(info, observed.pods());
    if (stalled != null) {
      // the roll and the others' policies go on; this policy's figures from those pods are missing
      status.degradedUnlessSo(Reason.InfoServerStalled, stalled);
    }
    CacheMapReports.apply(status.status().getRegionServers(), observed.cacheMapRemovals());
    status.balance();
    recommend.update(c, status.status(), planned.plan(), intervals);
    Duration requeue = min(MetricsCollector.interval(policy.getSpec()), d.get().requeueAfter());
    requeue = newVersion ? min(requeue, RECREATE_REQUEUE) : requeue;
    return write(
        ctx,
        policy,
        status,
        rolled.releaseIn() == null ? requeue : min(requeue, rolled.releaseIn()));
  }

  /**
   * A step threw (an API call refused, HBase unreachable mid-call): the conditions say so (Ready
   * False, Degraded True, reason ReconcileError) instead of keeping the last reconcile's, and the
   * framework retries with its backoff.
   */
  @Override
  public ErrorStatusUpdateControl<BlockCachePolicy> updateErrorStatus(
      BlockCachePolicy policy, Context<BlockCachePolicy> ctx, Exception e) {
    log.warn(
        "policy {}/{}: reconcile failed: {}",
        policy.getMetadata().getNamespace(),
        policy.getMetadata().getName(),
        e.toString());
    try {
      write(ctx, policy, new StatusAggregator(policy, clock.instant()).failed(e), INVALID_REQUEUE);
    } catch (RuntimeException writeFailed) {
      log.warn(
          "policy {}: could not write the error status: {}",
          policy.getMetadata().getName(),
          writeFailed.toString());
    }
    return ErrorStatusUpdateControl.noStatusUpdate();
  }

  @Override
  public DeleteControl cleanup(BlockCachePolicy policy, Context<BlockCachePolicy> ctx) {
    // The StatefulSet, its pods, PVCs and the derived ConfigMap stay; only the policy's
    // PodDisruptionBudget goes (also owned by the policy, for the garbage collector). HBase is left
    // as a roll would leave it: balancer restored, marks cleared (ReleaseStep), on its own
    // cluster only.
    PolicyContext c = new PolicyContext(policy, ctx.getClient(), informers, clock.instant());
    // a try at most every 30 s, whatever runs the cleanup: an update, a pod's event (ReleaseStep)
    boolean owes = ReleaseStep.needsRelease(c);
    Duration tooSoon = owes ? release.untilNextTry(c) : null;
    if (tooSoon != null) {
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(tooSoon);
    }
    try {
      disruptionBudget.deleteOwn(c);
    } catch (RuntimeException e) {
      log.warn(
          "could not delete the PodDisruptionBudget of {}: {}",
          policy.getMetadata().getName(),
          e.toString());
    }
    CredentialsStep.Result identity =
        owes ? credentials.resolve(c) : new CredentialsStep.Unsecured();
    ReleaseStep.Given given;
    if (identity instanceof CredentialsStep.Refused r) {
      release.trying(c);
      given = new ReleaseStep.Given("no identity for HBase (" + r.message() + ")", false);
    } else {
      given = release.release(c, CredentialsStep.login(identity));
    }
    String left = given.left();
    if (left != null && release.letGo(c, left)) {
      BalancerRecord.forget(c);
    } else if (left != null) {
      // the policy, and its status (what is owed), stay until HBase is given back. The condition
      // is written once: a write of a deleting policy starts the next cleanup (PolicyChanges), and
      // a message that changed at every try (an error's text) would make that a loop. Once more
      // when the balancer is back: the record no longer owes it, and is not sent again
      // (the target's record of it goes only once the status no longer owes it)
      var status = policy.getStatus();
      boolean balancerBack =
          given.balancerBack()
              && ((status != null
                      && status.getRollout() != null
                      && Boolean.TRUE.equals(status.getRollout().getBalancerWasOn()))
                  || c.target().filter(sts -> BalancerRecord.recorded(sts, policy)).isPresent());
      if (balancerBack
          || status == null
          || !Conditions.isTrue(status.getConditions(), Conditions.GIVE_BACK_PENDING)) {
        StatusAggregator owed = new StatusAggregator(policy, clock.instant()).givingBack(left);
        if (balancerBack && owed.rollout() != null) {
          owed.rollout().setBalancerWasOn(null);
        }
        try {
          write(ctx, policy, owed, ReleaseStep.PENDING_RETRY);
          if (balancerBack) {
            BalancerRecord.forgetBalancer(c);
          }
        } catch (RuntimeException e) {
          log.warn(
              "policy {}: could not write GiveBackPending: {}",
              policy.getMetadata().getName(),
              e.toString());
        }
      }
      return DeleteControl.noFinalizerRemoval().rescheduleAfter(ReleaseStep.PENDING_RETRY);
    }
    clusters.forget(policy); // its connection closes unless another policy uses it
    storage.ledger().forgetDeleted(c.client(), policy);
    metrics.forget(policy);
    writes.forget(policy.getMetadata().getUid());
    return DeleteControl.defaultDelete();
  }

  // ------------------------------------------------------------------ pieces

  /**
   * A roll under way when the policy stopped being applicable: the cluster goes back to normal
   * operation (see {@link Roller#hold}) until the policy is valid again, and the roll then goes on.
   */
  private void hold(PolicyContext c, StatusAggregator status, Observed observed, Enum<?> why) {
    ConfigMap base =
        observed != null
            ? observed.base()
            : c.configMap(c.policy().getSpec().getHbaseSiteConfigMap()).orElse(null);
    // a status that lost balancerWasOn mid-roll: the target's record still has it, as in a roll
    RolloutStatus previous =
        BalancerRecord.recovered(
            status.rollout(),
            observed != null ? observed.target() : c.target().orElse(null),
            c.policy());
    if (!Roller.needsHold(previous)) {
      return;
    }
    CredentialsStep.Result identity = credentials.resolve(c);
    if (identity instanceof CredentialsStep.Refused r) {
      log.warn(
          "policy {}: the roll cannot be held, no identity for HBase: {}",
          c.policy().getMetadata().getName(),
          r.message());
      return;
    }
    roll.hold(
            c,
            base,
            observed == null ? null : observed.pods(),
            previous,
            why,
            CredentialsStep.login(identity))
        .ifPresent(status::held);
  }

  /** Writes the status when it changed ({@link StatusWrites#write}). */
  private UpdateControl<BlockCachePolicy> write(
      Context<BlockCachePolicy> ctx,
      BlockCachePolicy policy,
      StatusAggregator status,
      Duration requeue) {
    BlockCachePolicyStatus changed = status.changed();
    if (changed != null) {
      storage.ledger().settled(ctx.getClient(), policy, changed);
    }
    return writes.write(ctx, policy, status, requeue, clock.instant());
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** The caches of the operator (null before the controller started): tests assert on them. */
  Informers informers() {
    return informers;
  }

  /**
   * The policies as the operator sees them (its informer cache), for {@link PolicyMetrics}: none
   * before the controller started (a standby that does not lead yet).
   */
  public List<BlockCachePolicy> policies() {
    Informers in = informers;
    if (in == null) {
      return List.of();
    }
    try {
      return in.policies().list().toList();
    } catch (RuntimeException notStarted) {
      return List.of();
    }
  }

  /**
   * Sends the events recorded so far, closes the HBase connections and the scrape pool (operator
   * shutdown).
   */
  public void close() {
    events.close();
    clusters.close();
    metrics.close();
  }
}
