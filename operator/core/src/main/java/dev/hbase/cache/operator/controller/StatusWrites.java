package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicyStatus;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus.Phase;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When each policy's status was last written, so that progress alone (a wait's message, a pod's
 * readiness, fresh cache figures: {@link StatusAggregator#onlyProgressChanged}) is written at most
 * once per {@link #PROGRESS_EVERY} while a roll runs. A roll wrote about nine statuses per pod
 * restart, a third of them progress alone (make bench-operator); each is a status patch that the
 * reconcile waits for and the API server computes. Progress left unwritten is worked out again by
 * the next reconcile, which is asked for within the deferral; every change of the roll's state is
 * written at once. Kept in memory only: an operator that starts writes its first status at once.
 * And how it is written ({@link #write}): conditional on the resourceVersion the reconcile read.
 */
final class StatusWrites {
  private static final Logger log = LoggerFactory.getLogger(StatusWrites.class);
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

  private final Map<String, Instant> last = new ConcurrentHashMap<>();

  /**
   * How long this status may wait before it is written, or {@link Duration#ZERO} to write it now.
   *
   * @param progressOnly only progress differs from the status written before
   */
  Duration deferral(
      String policyUid, BlockCachePolicyStatus next, boolean progressOnly, Instant now) {
    Instant before = last.get(policyUid);
    if (!progressOnly
        || before == null
        || next.getRollout() == null
        || next.getRollout().getPhase() != Phase.Rolling) {
      return Duration.ZERO;
    }
    Duration left = Duration.between(now, before.plus(PROGRESS_EVERY));
    return left.isNegative() ? Duration.ZERO : left;
  }

  void written(String policyUid, Instant at) {
    last.put(policyUid, at);
  }

  void forget(String policyUid) {
    last.remove(policyUid);
  }

  /**
   * Writes the status when it changed; progress alone waits a few seconds while a roll runs ({@link
   * StatusWrites}). The roll's state lives in the status, so the next reconcile must see this write
   * even when an event (a pod turning Ready) triggers it before the informer has caught up:
   * otherwise it re-decides a step already taken (seen: a second PodRestarted event for one
   * restart, a balancer switched off and on again after a roll). So the written policy goes into
   * JOSDK's cache over the informer (handleRecentResourceUpdate, as PrimaryUpdateAndCacheUtils
   * does) until the informer has it.
   *
   * <p>The write is a server-side apply of the whole status with the resourceVersion this reconcile
   * read: the API server refuses it (409) when the policy changed since, and a status computed from
   * an older record never overwrites a newer one (another operator's in-flight pod, with two
   * running at once; a user's spec edit). PrimaryUpdateAndCacheUtils re-applied the same status
   * with the newer resourceVersion instead: the last writer won. A refused write is dropped: {@link
   * #refused}.
   */
  UpdateControl<BlockCachePolicy> write(
      Context<BlockCachePolicy> ctx,
      BlockCachePolicy policy,
      StatusAggregator status,
      Duration requeue,
      Instant now) {
    BlockCachePolicyStatus changed = status.changed();
    if (changed != null) {
      String uid = policy.getMetadata().getUid();
      boolean progressOnly = status.onlyProgressChanged();
      Duration wait = deferral(uid, changed, progressOnly, now);
      if (!wait.isZero()) {
        // progress alone, written less than PROGRESS_EVERY ago: the next reconcile works it out
        // again and writes it, with whatever else changed by then
        return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(min(requeue, wait));
      }
      BlockCachePolicy fresh = new BlockCachePolicy();
      fresh.setMetadata(
          new ObjectMetaBuilder()
              .withName(policy.getMetadata().getName())
              .withNamespace(policy.getMetadata().getNamespace())
              .withResourceVersion(policy.getMetadata().getResourceVersion())
              .build());
      fresh.setStatus(changed);
      BlockCachePolicy written;
      try {
        written =
            ctx.getClient()
                .resource(fresh)
                .subresource("status")
                .patch(
                    new PatchContext.Builder()
                        .withForce(true)
                        .withFieldManager(ctx.getControllerConfiguration().fieldManager())
                        .withPatchType(PatchType.SERVER_SIDE_APPLY)
                        .build());
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
        return refused(ctx, policy, progressOnly, requeue);
      }
      ctx.eventSourceRetriever()
          .getControllerEventSource()
          .handleRecentResourceUpdate(ResourceID.fromResource(policy), written, policy);
      written(uid, now);
    }
    return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(requeue);
  }

  /**
   * The policy changed since this reconcile read it (another writer: a second operator, a user's
   * edit), and its status was not written. Progress alone is dropped: the change that refused it
   * brings its own reconcile, which works the progress out again. A write of the roll's state means
   * this reconcile decided on an older record: the policy as the API server has it now goes into
   * the cache over the informer, and the next reconcile, at once, decides again from it.
   */
  private static UpdateControl<BlockCachePolicy> refused(
      Context<BlockCachePolicy> ctx,
      BlockCachePolicy policy,
      boolean progressOnly,
      Duration requeue) {
    String ns = policy.getMetadata().getNamespace();
    String name = policy.getMetadata().getName();
    if (progressOnly) {
      log.debug("policy {}/{}: progress not written, the policy changed since", ns, name);
      return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(requeue);
    }
    BlockCachePolicy now =
        ctx.getClient().resources(BlockCachePolicy.class).inNamespace(ns).withName(name).get();
    log.info(
        "policy {}/{}: status not written: the policy changed since this reconcile read it"
            + " (resourceVersion {}, now {}); deciding again",
        ns,
        name,
        policy.getMetadata().getResourceVersion(),
        now == null ? "deleted" : now.getMetadata().getResourceVersion());
    if (now != null) {
      ctx.eventSourceRetriever()
          .getControllerEventSource()
          .handleRecentResourceUpdate(ResourceID.fromResource(policy), now, policy);
    }
    return UpdateControl.<BlockCachePolicy>noUpdate().rescheduleAfter(Duration.ZERO);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
