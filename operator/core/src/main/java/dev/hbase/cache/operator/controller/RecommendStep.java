package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.plan.Durations;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Recommender;
import dev.hbase.cache.operator.plan.Recommender.Advice;
import dev.hbase.cache.operator.plan.Recommender.ServerInterval;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Sizing advice ({@code spec.autoTune}): adds each metrics interval to the window in {@code
 * status.recommendation.window} (so an operator restart goes on with it), and when the window is
 * complete puts {@link Recommender#advise}'s answer in the status, with a RecommendationChanged
 * event when the recommended settings change. Intervals while a roll runs are left out (drains and
 * restarts are not the workload). Nothing is applied.
 */
final class RecommendStep {
  static final String DEFAULT_WINDOW = "1h";
  static final double DEFAULT_TARGET = 0.95;

  private final Events events;
  private final boolean allowJvmAgents;

  RecommendStep(Events events, boolean allowJvmAgents) {
    this.events = events;
    this.allowJvmAgents = allowJvmAgents;
  }

  static boolean enabled(BlockCachePolicySpec spec) {
    return spec.getAutoTune() == null
        || spec.getAutoTune().getMode() == null
        || spec.getAutoTune().getMode() == AutoTuneSpec.Mode.Recommend;
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
      KubernetesClient client,
      BlockCachePolicy policy,
      BlockCachePolicyStatus status,
      Plan plan,
      List<ServerInterval> intervals,
      Instant now) {
    BlockCachePolicySpec spec = policy.getSpec();
    if (!enabled(spec)) {
      status.setRecommendation(null);
      return;
    }
    RolloutStatus ro = status.getRollout();
    if (ro != null && ro.getPhase() != RolloutStatus.Phase.Idle) {
      return;
    }
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
      Advice advice = Recommender.advise(spec, plan, r.getWindow(), target, allowJvmAgents);
      String bucketCache = advice.mode().hasL2() ? Sizes.quantity(advice.bucketCache()) : null;
      boolean same =
          Objects.equals(r.getMode(), advice.mode().name())
              && Objects.equals(r.getBucketCache(), bucketCache)
              && Objects.equals(r.getWriterThreads(), advice.writerThreads())
              && Objects.equals(r.getWriterQueueLength(), advice.writerQueueLength());
      if (!same) {
        r.setSince(now.toString());
        if (advice.differs()) {
          events.record(
              client,
              policy,
              false,
              "RecommendationChanged",
              describe(advice, bucketCache) + ": " + advice.message());
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

  static String describe(Advice a, String bucketCache) {
    return "recommended: mode "
        + a.mode()
        + (bucketCache == null ? "" : ", memory.bucketCache " + bucketCache)
        + (a.writerThreads() == null ? "" : ", tuning.writerThreads " + a.writerThreads())
        + (a.writerQueueLength() == null
            ? ""
            : ", tuning.writerQueueLength " + a.writerQueueLength());
  }
}
