package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Map;
import java.util.Objects;

/**
 * Which updates of a policy start a reconcile at once: a spec change (new generation), a change of
 * the manual-restart annotation ({@value BlockCachePolicy#RESTART_ANNOTATION}: part of the
 * revision, but an annotation does not bump the generation, so JOSDK's generation filter dropped it
 * and the roll started only at the next requeue, up to a minute later), the finalizer, and the
 * deletion. The operator's own status writes start nothing.
 */
public final class PolicyChanges implements OnUpdateFilter<BlockCachePolicy> {

  @Override
  public boolean accept(BlockCachePolicy now, BlockCachePolicy before) {
    ObjectMeta n = now.getMetadata();
    ObjectMeta b = before.getMetadata();
    return !Objects.equals(n.getGeneration(), b.getGeneration())
        || !Objects.equals(restart(n), restart(b))
        || !Objects.equals(n.getFinalizers(), b.getFinalizers())
        || n.getDeletionTimestamp() != null;
  }

  private static String restart(ObjectMeta m) {
    Map<String, String> a = m.getAnnotations();
    return a == null ? null : a.get(BlockCachePolicy.RESTART_ANNOTATION);
  }
}
