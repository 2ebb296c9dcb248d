package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.plan.JvmOptions;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Recommender;
import dev.hbase.cache.operator.plan.Recommender.Advice;
import dev.hbase.cache.operator.plan.Recommender.ServerInterval;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sizing advice ({@code spec.autoTune}): adds each metrics interval to the window in {@code
 * status.recommendation.window} (so an operator restart goes on with it), and when the window is
 * complete puts {@link Recommender#advise}'s answer in the status, with a RecommendationChanged
 * event when the recommended settings change. Intervals while a roll runs are left out (drains and
 * restarts are not the workload). Nothing is applied, except in autoTune mode Apply: a
 * recommendation that differs from the spec is written into it ({@link #apply}) once the roll is
 * idle, and the RegionServers roll as after a user's edit.
 */
final class RecommendStep {
  private static final Logger log = LoggerFactory.getLogger(RecommendStep.class);
  static final String DEFAULT_WINDOW = AutoTuneSpec.DEFAULT_WINDOW;
  static final double DEFAULT_TARGET = AutoTuneSpec.DEFAULT_TARGET_HIT_RATIO;

  private final Events events;
  private final JvmOptions.Trust jvmTrust;

  RecommendStep(Events events, JvmOptions.Trust jvmTrust) {
    this.events = events;
    this.jvmTrust = jvmTrust;
  }

  static boolean enabled(BlockCachePolicySpec spec) {
    return spec.getAutoTune() == null || spec.getAutoTune().getMode() != AutoTuneSpec.Mode.Off;
  }

  /**
   * Called on every plan, before anything is applied (a roll, a storage change or a blocked volume
   * may end the reconcile before {@link #update}): a standing recommendation the user followed (or
   * that the policy's new settings answer otherwise) no longer differs, at once rather than after
   * the next window.
   */
  static void followed(BlockCachePolicyStatus status, BlockCachePolicySpec spec, Plan plan) {
    Recommendation standing = status.getRecommendation();
    if (standing != null
        && Boolean.TRUE.equals(standing.getDiffers())
        && !Recommender.stillDiffers(standing, spec, plan)) {
      standing.setDiffers(false);
    }
  }

  void update(
      PolicyContext c, BlockCachePolicyStatus status, Plan plan, List<ServerInterval> intervals) {
    KubernetesClient client = c.client();
    BlockCachePolicy policy = c.policy();
    Instant now = c.now();
    BlockCachePolicySpec spec = policy.getSpec();
    if (!enabled(spec)) {
      status.setRecommendation(null);
      return;
    }
    RolloutStatus ro = status.getRollout();
    if (ro != null && ro.getPhase() != RolloutStatus.Phase.Idle) {
      return;
    }
    gather(client, policy, status, plan, intervals, now);
    Recommendation r = status.getRecommendation();
    if (applies(spec) && r != null && Recommender.stillDiffers(r, spec, plan)) {
      apply(client, policy, r, plan, now);
    }
  }

  static boolean applies(BlockCachePolicySpec spec) {
    return spec.getAutoTune() != null
        && spec.getAutoTune().getMode() == AutoTuneSpec.Mode.Apply
        && (spec.getRollout() == null || !Boolean.TRUE.equals(spec.getRollout().getPaused()));
  }

  private void gather(
      KubernetesClient client,
      BlockCachePolicy policy,
      BlockCachePolicyStatus status,
      Plan plan,
      List<ServerInterval> intervals,
      Instant now) {
    BlockCachePolicySpec spec = policy.getSpec();
    AutoTuneSpec a = spec.getAutoTune() == null ? new AutoTuneSpec() : spec.getAutoTune();
    Duration window = Durations.parse(a.getWindow(), DEFAULT_WINDOW);
    double target = a.getTargetHitRatio() == null ? DEFAULT_TARGET : a.getTargetHitRatio();
    Recommendation r =
        status.getRecommendation() == null ? new Recommendation() : status.getRecommendation();
    r.setWindow(Recommender.add(r.getWindow(), intervals, now));
    if (r.getWindow() == null) {
      return; // no read yet
    }
    if (!Recommender.gatheredUnder(r.getWindow(), plan)) {
      // the plan changed since the window began: its evidence is of other settings
      r.setWindow(null);
      status.setRecommendation(r.getMode() == null ? null : r);
      return;
    }
    if (Recommender.complete(r.getWindow(), window, now)) {
      Advice advice = Recommender.advise(spec, plan, r.getWindow(), target, jvmTrust);
      String bucketCache = advice.mode().hasL2() ? Sizes.quantity(advice.bucketCache()) : null;
      boolean same =
          Objects.equals(r.getMode(), advice.mode().name())
              && Objects.equals(r.getBucketCache(), bucketCache)
              && Objects.equals(r.getWriterThreads(), advice.writerThreads())
              && Objects.equals(r.getWriterQueueLength(), advice.writerQueueLength());
      if (!same) {
        r.setSince(now.toString()).setApplied(null);
        if (advice.differs()) {
          events.record(
              client,
              policy,
              false,
              Reason.RecommendationChanged,
              describe(
                      advice.mode().name(),
                      bucketCache,
                      advice.writerThreads(),
                      advice.writerQueueLength())
                  + ": "
                  + advice.message());
        }
      }
      r.setMode(advice.mode().name())
          .setBucketCache(bucketCache)
          .setWriterThreads(advice.writerThreads())
          .setWriterQueueLength(advice.writerQueueLength())
          .setDiffers(advice.differs())
          .setMessage(advice.message())
          .setEvidence(r.getWindow())
          .setWindow(null);
    }
    status.setRecommendation(r);
  }

  /**
   * autoTune mode Apply: writes the recommendation into the spec, as the user's edit would be,
   * unless the policy changed since this reconcile read it (the next reconcile plans the new spec
   * first) or {@link Recommender#following} refuses it (a RecommendationNotApplied warning, once:
   * nothing is written). A failed write (a conflict) is tried again on the next reconcile: the
   * recommendation still differs.
   */
  void apply(
      KubernetesClient client, BlockCachePolicy policy, Recommendation r, Plan plan, Instant now) {
    String what =
        describe(r.getMode(), r.getBucketCache(), r.getWriterThreads(), r.getWriterQueueLength());
    Recommender.Following f = Recommender.following(policy.getSpec(), r, plan, jvmTrust);
    if (f.spec() == null) {
      events.warn(
          client,
          policy,
          Reason.RecommendationNotApplied,
          what + " (autoTune mode Apply) is not written to the spec: " + f.refused());
      return;
    }
    Long generation = policy.getMetadata().getGeneration();
    BlockCachePolicy written;
    try {
      written =
          client
              .resources(BlockCachePolicy.class)
              .inNamespace(policy.getMetadata().getNamespace())
              .withName(policy.getMetadata().getName())
              .edit(
                  latest -> {
                    if (Objects.equals(latest.getMetadata().getGeneration(), generation)) {
                      latest.setSpec(f.spec());
                    }
                    return latest;
                  });
    } catch (KubernetesClientException e) {
      log.info(
          "policy {}: could not apply the recommendation now: {}",
          policy.getMetadata().getName(),
          e.getMessage());
      return;
    }
    if (written != null
        && written.getMetadata().getGeneration() != null
        && !Objects.equals(written.getMetadata().getGeneration(), generation)) {
      r.setApplied(now.toString());
      // the status this reconcile writes carries the version the operator's own spec write made:
      // with the one it read, the status write (resourceVersion-guarded, StatusWrites) would be
      // refused as stale, and the recommendation it holds lost (AdviceApplyIT)
      policy.getMetadata().setResourceVersion(written.getMetadata().getResourceVersion());
      events.record(
          client,
          policy,
          false,
          Reason.RecommendationApplied,
          what + " written to the spec (autoTune mode Apply): " + r.getMessage());
    }
  }

  static String describe(
      String mode, String bucketCache, Integer writerThreads, Integer writerQueueLength) {
    return "recommended: mode "
        + mode
        + (bucketCache == null ? "" : ", memory.bucketCache " + bucketCache)
        + (writerThreads == null ? "" : ", tuning.writerThreads " + writerThreads)
        + (writerQueueLength == null ? "" : ", tuning.writerQueueLength " + writerQueueLength);
  }
}
