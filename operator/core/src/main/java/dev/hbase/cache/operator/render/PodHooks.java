package dev.hbase.cache.operator.render;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.operator.plan.Plan;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Lifecycle;
import io.fabric8.kubernetes.api.model.LifecycleBuilder;
import io.fabric8.kubernetes.api.model.LifecycleHandler;
import io.fabric8.kubernetes.api.model.LifecycleHandlerBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * What the operator runs in the RegionServer's pod besides HBase, each a script in this package run
 * by the RegionServer's own image: the {@code cache-map-guard} (cache-map-guard.sh), as an init
 * container and as the container's postStart hook, and the warm stop (warm-stop.sh), its preStop
 * hook. Part of the patch {@link Desired#regionServerPatch} renders.
 */
public final class PodHooks {
  public static final String CACHE_MAP_GUARD = "cache-map-guard";

  /**
   * The script of {@link #cacheMapGuard} and {@link #lifecycle}'s postStart: {@code sh -c <script>
   * cache-map-guard <map path> [termination log]}.
   */
  public static final String CACHE_MAP_GUARD_SCRIPT = resource("cache-map-guard.sh");

  /**
   * The preStop hook of {@link #warmStop}: {@code bash -c <script> warm-stop <port> <bound> <stall
   * bound>}.
   */
  public static final String WARM_STOP = "warm-stop";

  public static final String WARM_STOP_SCRIPT = resource("warm-stop.sh");

  /**
   * How long the preStop hook holds a stopping RegionServer that still serves regions: the time the
   * operator has to move them off it warm. With the operator down it is what a stop costs more than
   * HBase's own, and the pod's grace period grows by as much.
   */
  public static final long WARM_STOP_SECONDS = 90;

  /**
   * How long the preStop hook waits for a stopping RegionServer's region count to fall (the drain
   * to begin, or to go on) before it lets HBase stop it: what a stop costs more than HBase's own
   * when no operator drains it (down, or the policy deleted). HBase refreshes the count every 5 s.
   */
  public static final long WARM_STOP_STALL_SECONDS = 20;

  /** Kubernetes' default terminationMessagePath. */
  static final String TERMINATION_LOG = "/dev/termination-log";

  private PodHooks() {}

  /**
   * The RegionServer container's hooks: the warm stop before it stops ({@link #warmStop}), the
   * cache-map-guard at each of its starts ({@link #guardAtStart}); null when neither applies.
   */
  static Lifecycle lifecycle(
      BlockCachePolicy policy, Plan plan, Container regionServer, int infoPort) {
    Optional<LifecycleHandler> preStop = warmStop(policy, regionServer, infoPort);
    Optional<LifecycleHandler> postStart = guardAtStart(plan, regionServer);
    if (preStop.isEmpty() && postStart.isEmpty()) {
      return null;
    }
    return new LifecycleBuilder()
        .withPreStop(preStop.orElse(null))
        .withPostStart(postStart.orElse(null))
        .build();
  }

  /**
   * The RegionServer container's preStop hook for a warm stop ({@code warm-stop.sh}): whoever stops
   * the pod, its RegionServer keeps running while it serves regions and they are leaving, for at
   * most {@link #WARM_STOP_SECONDS} (and {@link #WARM_STOP_STALL_SECONDS} without a fall of its
   * region count), so that the operator moves them to where their blocks are cached first. Only
   * with DrainAndReload (InPlace is the choice of HBase's own stop), and never over a preStop hook
   * of the template's own (a chart's RegionMover, say): that one is kept, and stops are HBase's or
   * that hook's.
   */
  public static Optional<LifecycleHandler> warmStop(
      BlockCachePolicy policy, Container regionServer, int infoPort) {
    var rollout = policy.getSpec().getRollout();
    var strategy =
        rollout == null ? RolloutSpec.Strategy.DrainAndReload : rollout.strategyOrDefault();
    if (strategy != RolloutSpec.Strategy.DrainAndReload) {
      return Optional.empty();
    }
    var own = regionServer.getLifecycle() == null ? null : regionServer.getLifecycle().getPreStop();
    if (own != null && !isOurs(own, WARM_STOP)) {
      return Optional.empty();
    }
    return Optional.of(
        new LifecycleHandlerBuilder()
            .withNewExec()
            .withCommand(
                "bash",
                "-c",
                WARM_STOP_SCRIPT,
                WARM_STOP,
                Integer.toString(infoPort),
                Long.toString(WARM_STOP_SECONDS),
                Long.toString(WARM_STOP_STALL_SECONDS))
            .endExec()
            .build());
  }

  /**
   * The cache-map-guard as the RegionServer container's postStart hook: a restart of the container
   * in its pod (an OOM kill, a crash, a failed liveness probe) runs no init container, and HBase
   * would read the map its last run left. The kubelet runs the hook as the container starts, while
   * the JVM takes seconds to reach the map; should the JVM read a damaged one first, the crash it
   * dies of is its last (the map is gone by then). Its message goes to the container's own
   * termination log: it shows as the container's lastState once that instance has ended. Not over a
   * postStart hook of the template's own.
   */
  static Optional<LifecycleHandler> guardAtStart(Plan plan, Container regionServer) {
    if (!guarded(plan)) {
      return Optional.empty();
    }
    var own =
        regionServer.getLifecycle() == null ? null : regionServer.getLifecycle().getPostStart();
    if (own != null && !isOurs(own, CACHE_MAP_GUARD)) {
      return Optional.empty();
    }
    String log =
        regionServer.getTerminationMessagePath() == null
            ? TERMINATION_LOG
            : regionServer.getTerminationMessagePath();
    return Optional.of(
        new LifecycleHandlerBuilder()
            .withNewExec()
            .withCommand(
                "sh", "-c", CACHE_MAP_GUARD_SCRIPT, CACHE_MAP_GUARD, plan.persistentPath(), log)
            .endExec()
            .build());
  }

  /** Whether a hook is the operator's {@code name} (of any version). */
  public static boolean isOurs(LifecycleHandler h, String name) {
    List<String> cmd = h.getExec() == null ? null : h.getExec().getCommand();
    return cmd != null && cmd.size() >= 4 && name.equals(cmd.get(3));
  }

  /** The persistent mode on a volume: a BucketCache map that survives the JVM. */
  static boolean guarded(Plan plan) {
    return plan.persistentPath() != null && plan.volume() != null && !plan.volume().memory();
  }

  /**
   * The init container that checks the BucketCache persistence map before HBase reads it and
   * removes one HBase 2.6.4 cannot restore (it dies on some at start: see cache-map-guard.sh), for
   * the persistent mode on a volume. It runs the RegionServer's own image and security context (the
   * image is the user's, not ours: only {@code sh}, {@code od}, {@code wc}, {@code tr} and {@code
   * rm} are needed; the same user can remove the file), and leaves its message in its termination
   * log (the operator turns it into an event).
   */
  public static Optional<Container> cacheMapGuard(Plan plan, Container regionServer) {
    if (!guarded(plan)) {
      return Optional.empty();
    }
    return Optional.of(
        new ContainerBuilder()
            .withName(CACHE_MAP_GUARD)
            .withImage(regionServer.getImage())
            .withImagePullPolicy(regionServer.getImagePullPolicy())
            .withSecurityContext(regionServer.getSecurityContext())
            .withCommand("sh", "-c", CACHE_MAP_GUARD_SCRIPT, CACHE_MAP_GUARD, plan.persistentPath())
            .withVolumeMounts(
                new VolumeMount(
                    plan.volume().mountPath(), null, Desired.CACHE_VOLUME, null, null, null, null))
            .withNewResources()
            .addToRequests("cpu", new Quantity("10m"))
            .addToRequests("memory", new Quantity("16Mi"))
            .addToLimits("memory", new Quantity("64Mi"))
            .endResources()
            .build());
  }

  static String resource(String name) {
    try (var in = PodHooks.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
