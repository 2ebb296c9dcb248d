package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.status.PlanStatus;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.plan.JvmOptions;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Planner;
import dev.hbase.cache.operator.plan.Refusal;
import dev.hbase.cache.operator.plan.Sizes;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.Map;

/**
 * The validate step, a pure function: the plan for the observed container, the derived hbase-site,
 * the revision pods are compared against, and whether the change drops persisted caches. What the
 * API server could not check is refused here, and nothing is applied.
 */
final class PlanStep {
  private PlanStep() {}

  sealed interface Result {}

  /** The policy cannot be applied to this target: {@code reason} is the condition reason. */
  record Refused(Reason reason, String message) implements Result {}

  /**
   * @param siteData the derived ConfigMap's data (the base with the plan's keys)
   * @param revision the pods' target revision: plan, derived files and the restart token
   * @param cacheResets why the next restarts drop the persisted caches (empty: they keep them);
   *     only for a new plan, compared with the one in the status
   */
  record Planned(Plan plan, Map<String, String> siteData, String revision, List<String> cacheResets)
      implements Result {

    String summary() {
      return plan.mode()
          + ": heap "
          + Sizes.quantity(plan.heap())
          + ", direct "
          + Sizes.quantity(plan.directMemory())
          + (plan.bucketCache() > 0 ? ", L2 " + Sizes.quantity(plan.bucketCache()) : "");
    }
  }

  static Result plan(Observed o, PlanStatus previous) {
    return plan(o, previous, JvmOptions.Trust.ALLOW_LIST);
  }

  /**
   * @param jvmTrust the operator's install setting for jvm.extraOptions ({@link JvmOptions})
   */
  static Result plan(Observed o, PlanStatus previous, JvmOptions.Trust jvmTrust) {
    var status = o.policy().getStatus();
    return plan(o, previous, status == null ? null : status.getMasterVersion(), jvmTrust);
  }

  /**
   * @param masterVersion the version the policy's HMaster last reported ({@code
   *     status.masterVersion}), null if none: the master keys only 2.6 has wait for it ({@code
   *     plan.MasterSite})
   */
  static Result plan(
      Observed o, PlanStatus previous, String masterVersion, JvmOptions.Trust jvmTrust) {
    BlockCachePolicy policy = o.policy();
    var spec = policy.getSpec();
    Map<String, String> baseSite;
    try {
      baseSite =
          SiteXml.parse(
              o.base().getData() == null ? null : o.base().getData().get(Desired.SITE_FILE));
    } catch (IllegalArgumentException e) {
      return new Refused(Reason.BaseConfigInvalid, e.getMessage());
    }
    PlanResult result =
        Planner.plan(
            spec,
            bytes(o.container(), "limits"),
            bytes(o.container(), "requests"),
            jvmTrust,
            baseSite,
            masterVersion);
    if (result instanceof Refusal r) {
      Long limit = bytes(o.container(), "limits");
      if (previous != null
          && previous.getMemoryLimit() != null
          && limit != null
          && !previous.getMemoryLimit().equals(Sizes.quantity(limit))) {
        // The pod template still carries the last plan (heap, direct memory) while the container
        // has the new limit: the operator does not own the limit and cannot plan for it, so it
        // says what a restart would do.
        return new Refused(
            Reason.MemoryLimitRefused,
            r.summary()
                + "; the container's memory limit changed from "
                + previous.getMemoryLimit()
                + " to "
                + Sizes.quantity(limit)
                + " since the last plan: a RegionServer that restarts now (an eviction, a crash)"
                + " starts with the heap planned for "
                + previous.getMemoryLimit()
                + " (heap "
                + previous.getHeap()
                + ", direct memory "
                + previous.getDirectMemory()
                + ") under "
                + Sizes.quantity(limit)
                + " and may be OOM-killed: restore the limit, or change the policy to fit it");
      }
      return new Refused(Reason.PlanRefused, r.summary());
    }
    Plan plan = (Plan) result;
    if (plan.volume() != null) {
      String clash = mountClash(plan.volume().mountPath(), o.container());
      if (clash != null) {
        return new Refused(Reason.MountPathConflict, clash);
      }
    }
    Map<String, String> data;
    try {
      data =
          Desired.siteData(
              o.base().getData(),
              plan.regionServerSite(),
              plan.regionServerSiteRemoved(),
              "hbase-site.xml of "
                  + spec.getHbaseSiteConfigMap()
                  + " with the cache settings of BlockCachePolicy "
                  + policy.getMetadata().getName()
                  + " (managed by hbase-cache-operator, edits are overwritten)");
    } catch (IllegalArgumentException e) {
      return new Refused(Reason.BaseConfigInvalid, e.getMessage());
    }
    String token =
        policy.getMetadata().getAnnotations() == null
            ? null
            : policy.getMetadata().getAnnotations().get(BlockCachePolicy.RESTART_ANNOTATION);
    List<String> resets =
        previous != null && !plan.configHash().equals(previous.getConfigHash())
            ? Planner.cacheResetReasons(previous.getRegionServerSite(), plan)
            : List.of();
    return new Planned(plan, data, Desired.revision(plan, data, token), resets);
  }

  /**
   * Why the cache volume cannot be mounted at {@code mountPath} in this container, or null: it must
   * not be, contain or lie under another mount of the container (the hbase-site config volume, a
   * keytab, a log volume): mounted over one it hides it, mounted under one it writes into it.
   */
  static String mountClash(String mountPath, Container c) {
    if (c.getVolumeMounts() == null) {
      return null;
    }
    String cache = trimSlashes(mountPath);
    for (var m : c.getVolumeMounts()) {
      if (Desired.CACHE_VOLUME.equals(m.getName()) || m.getMountPath() == null) {
        continue; // the operator's own cache mount
      }
      String other = trimSlashes(m.getMountPath());
      if (cache.equals(other) || under(cache, other) || under(other, cache)) {
        return "storage.mountPath "
            + mountPath
            + (cache.equals(other) ? " is" : under(cache, other) ? " lies under" : " contains")
            + " the mount "
            + m.getMountPath()
            + " (volume "
            + m.getName()
            + ") of container "
            + c.getName()
            + ": choose a path apart from every other mount, e.g. "
            + dev.hbase.cache.api.v1alpha1.spec.StorageSpec.DEFAULT_MOUNT_PATH;
      }
    }
    return null;
  }

  private static boolean under(String path, String dir) {
    return dir.equals("/") || path.startsWith(dir + "/");
  }

  private static String trimSlashes(String p) {
    String t = p.replaceAll("/+", "/");
    return t.length() > 1 && t.endsWith("/") ? t.substring(0, t.length() - 1) : t;
  }

  private static Long bytes(Container c, String which) {
    var res = c.getResources();
    if (res == null) {
      return null;
    }
    Map<String, Quantity> m = "limits".equals(which) ? res.getLimits() : res.getRequests();
    return m == null ? null : Sizes.bytes(m.get("memory"));
  }
}
