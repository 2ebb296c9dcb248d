package dev.hbase.cache.operator.roll;

import static dev.hbase.cache.operator.roll.RollModel.META_REGION;
import static dev.hbase.cache.operator.roll.RollModel.serverFor;

import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.PodRoll;
import dev.hbase.cache.api.v1alpha1.status.PodRoll.Step;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A RegionServer that came back without a pod delete: the kubelet restarted its container (a crash,
 * an OOM kill, a failed liveness probe), so no preStop hook ran and nothing drained it. HBase's
 * master reassigned its regions to the others while it was down, and its persistent cache came back
 * with it: seen on kind, the server stayed empty (6 / 0 / 2 regions) until the next roll. Here such
 * a server, once it has reported its cache, gets back regions it holds cached, as a roll's reload
 * would: taken in flight at the Reloading step (a "stop" with cause {@link #CAUSE}, which holds the
 * roll's admission until its regions are home), then the warm gate.
 *
 * <p>Which regions: the master's view has no record of what the lost instance served, but the new
 * one's load report lists what its cache holds ({@code regionCachedInfo}, restored from the
 * persistence file). A region qualifies when this server caches at least as much of it as the
 * server now serving it; at most this server's share of all regions ({@code ceil(regions /
 * servers)}) go back, taken first from the servers holding the most. So the cluster ends balanced
 * and every region that moves goes where its blocks are cached.
 *
 * <p>When: the pod's RegionServer container started again in it within {@link #WINDOW} (a sidecar's
 * restart is none: the Observer reads only that container's), and the pod's server started with it
 * (its start code not older than that restart); the pod is Ready, not stopping, not in flight,
 * below the replicas; its server has reported, no mark and no dead instance is listed at its host
 * and port (an administrator's decommission, the master still recovering the killed instance), and
 * it holds fewer regions than its share (two fewer once it serves any region it caches) while a
 * server it could take a cached region from holds at least two more ({@link #claims}); nothing is
 * in transition (while something is, during the first {@link #SETTLING}, it is looked at again
 * every few seconds); the roll is not paused. Regions come only from this policy's servers. Only
 * with DrainAndReload (InPlace leaves placement to HBase). An idle roller does not ask HBase; a
 * container restart within {@link #WINDOW} makes it ask ({@link #recent}). A container restarting
 * again and again is not taken (the Observer gives no restart time for it: a crash loop would pull
 * regions onto a server that dies).
 *
 * <p>Meanwhile the pod is in flight like a roll's reload: the phase is Rolling, HBase's balancer
 * off until its regions are home, and the roll's next pod waits. A homecoming that cannot finish
 * (its server gone again, marked meanwhile, or its regions not home within podReadyTimeout) ends
 * with a Warning event and blocks nothing ({@link #end}).
 */
final class Homecomings {
  /** {@code stoppedBy} of a homecoming's entry in {@code status.rollout.inFlight}. */
  static final String CAUSE = "ContainerRestart";

  /** How long after a container restart the roller asks HBase whether its server is empty. */
  static final Duration WINDOW = Duration.ofMinutes(10);

  /**
   * How long after a container restart the roller looks every few seconds for its server to report
   * its cache (then, within {@link #WINDOW}, at the roller's idle pace).
   */
  static final Duration SETTLING = Duration.ofMinutes(2);

  /**
   * The RegionServer's start code is read off its JVM's clock, the restart off the kubelet's (the
   * same node's): an instance older than the restart by more than this did not start with it.
   */
  static final Duration CLOCK_SLACK = Duration.ofSeconds(5);

  private final StepState t;
  private final BalancerSwitch balancer;

  Homecomings(StepState t, BalancerSwitch balancer) {
    this.t = t;
    this.balancer = balancer;
  }

  static boolean is(PodRoll r) {
    return CAUSE.equals(r.getStoppedBy());
  }

  /** Whether some pod's container restarted in place within {@link #WINDOW} of {@code now}. */
  static boolean recent(List<PodView> pods, Instant now) {
    return restartedWithin(pods, now, WINDOW);
  }

  /** Whether some pod's container restarted in place within {@code window} of {@code now}. */
  private static boolean restartedWithin(List<PodView> pods, Instant now, Duration window) {
    return pods.stream()
        .anyMatch(
            p ->
                p.restartedInPlaceAt() != null
                    && p.restartedInPlaceAt().isAfter(now.minus(window)));
  }

  void admit() {
    ClusterSnapshot h = t.hbase();
    if (t.s.strategy() != RolloutSpec.Strategy.DrainAndReload
        || t.s.paused()
        || !recent(t.in.pods(), t.now())) {
      return;
    }
    if (!h.masterReachable() || h.regionsInTransition() > 0) {
      // the master recovering the killed instance: looked at again soon while a restart is fresh
      if (restartedWithin(t.in.pods(), t.now(), SETTLING)) {
        t.requeue(StepState.POLL);
      }
      return;
    }
    Set<ServerId> ours =
        t.in.pods().stream()
            .flatMap(p -> serverFor(h, p).stream())
            .map(ServerState::id)
            .collect(Collectors.toSet());
    for (PodView p : t.in.pods()) {
      Instant restarted = p.restartedInPlaceAt();
      if (restarted == null
          || !restarted.isAfter(t.now().minus(WINDOW))
          || p.terminating()
          || p.ordinal() >= t.in.replicas()
          || t.inFlight(p.name())) {
        continue;
      }
      var server =
          serverFor(h, p)
              .filter(ServerState::reported)
              // the instance the restart started (not one from before it: a sidecar's restart)
              .filter(s -> s.id().startCode() >= restarted.minus(CLOCK_SLACK).toEpochMilli())
              // an administrator's mark on this endpoint, or the master still recovering an
              // instance of it: left alone
              .filter(s -> !s.decommissioned() && !markedOrDead(h, s.id()));
      if (p.ready() && server.isPresent()) {
        List<String> regions = claims(h, server.get(), taken(), ours::contains);
        if (!regions.isEmpty()) {
          start(p, server.get(), regions);
          continue;
        }
      }
      boolean settling = restarted.isAfter(t.now().minus(SETTLING));
      if (settling && (!p.ready() || server.isEmpty() || server.get().cachedMb().isEmpty())) {
        // back in the pod but not reported yet, or its cache not restored yet: looked at again soon
        t.requeue(StepState.POLL);
      }
    }
  }

  /** A decommission mark, or a dead instance, at {@code id}'s host and port. */
  static boolean markedOrDead(ClusterSnapshot h, ServerId id) {
    return java.util.stream.Stream.concat(h.decommissioned().stream(), h.dead().stream())
        .anyMatch(id::sameEndpoint);
  }

  /**
   * A homecoming that cannot go on (its server gone again, a mark set on it, its regions not home
   * within podReadyTimeout): it leaves the flight with an event; the regions stay where they are,
   * no mark is touched, nothing blocks. A next restart of the container starts a new one.
   */
  static void end(StepState t, PodRoll r, String why) {
    t.st.getInFlight().remove(r);
    t.events.add(new Event(true, EventReason.HomecomingEnded, Narration.homecomingEnded(r, why)));
    t.requeue(Duration.ZERO);
  }

  /**
   * Whether a homecoming ended here: its server went away again (a container restart keeps the pod,
   * so there is no new pod to wait for: the next restart starts a homecoming of its own), or a mark
   * was set on it meanwhile (an administrator's: never cleared by a resend). Nothing blocks; the
   * regions stay where they are.
   */
  static boolean ends(
      StepState t, PodRoll r, ClusterSnapshot h, java.util.Optional<ServerState> now) {
    ServerId id = ServerId.parse(r.getNewServer());
    String why =
        now.isEmpty()
            ? "its RegionServer went away again"
            : now.get().decommissioned() || h.decommissioned().stream().anyMatch(id::sameEndpoint)
                ? "its RegionServer was decommissioned meanwhile"
                : null;
    if (why == null) {
      return false;
    }
    end(t, r, why);
    return true;
  }

  /** Regions another entry in flight (or a scaled-down pod) will send home: not claimed here. */
  private Set<String> taken() {
    var all = new ArrayList<>(t.st.getInFlight());
    if (t.st.getScaledDown() != null) {
      all.addAll(t.st.getScaledDown());
    }
    return all.stream()
        .filter(r -> r.getRegions() != null)
        .flatMap(r -> r.getRegions().stream())
        .collect(Collectors.toSet());
  }

  /**
   * The regions to send to {@code server}: those it caches at least as much of as their current
   * server, up to its share, from the fullest servers first (then the most cached here, then by
   * name), and only from a server that would still hold more than it. A server that serves some of
   * what it caches is not skipped for it: HBase's cache-aware balancer may have sent one region
   * home before the roller looked, and the rest still belong there. One that serves some of them
   * and holds its share less one or more, or one among counts already even, gets nothing: a
   * homecoming done is not started again when the balancer later moves one region away. Pure.
   */
  static List<String> claims(ClusterSnapshot h, ServerState server, Set<String> taken) {
    return claims(h, server, taken, x -> true);
  }

  /** Same, taking regions only from the servers {@code mayGive} accepts (this policy's pods). */
  static List<String> claims(
      ClusterSnapshot h,
      ServerState server,
      Set<String> taken,
      java.util.function.Predicate<ServerId> mayGive) {
    Set<String> cached =
        server.cachedMb().entrySet().stream()
            .filter(e -> e.getValue() > 0 && !META_REGION.equals(e.getKey()))
            .map(Map.Entry::getKey)
            .collect(Collectors.toSet());
    if (cached.isEmpty()) {
      return List.of();
    }
    Map<String, ServerId> where = h.locations();
    Map<ServerId, Integer> count = new HashMap<>();
    Map<ServerId, ServerState> byId = new HashMap<>();
    h.live().forEach(s -> count.put(s.id(), s.regionCount()));
    h.live().forEach(s -> byId.put(s.id(), s));
    int total = count.values().stream().mapToInt(Integer::intValue).sum();
    int share = (total + h.live().size() - 1) / Math.max(1, h.live().size());
    if (server.regions().stream().anyMatch(cached::contains) && server.regionCount() >= share - 1) {
      // home already, within one of its share (a homecoming done, the roll's reload, or HBase's
      // balancer that moved one away since): not started again for one region
      return List.of();
    }
    List<String> candidates =
        cached.stream()
            .filter(r -> !taken.contains(r))
            .filter(r -> where.containsKey(r) && !where.get(r).equals(server.id()))
            .filter(r -> mayGive.test(where.get(r)))
            .filter(r -> server.cachedMb(r) >= byId.get(where.get(r)).cachedMb(r))
            .collect(Collectors.toCollection(ArrayList::new));
    List<String> out = new ArrayList<>();
    int mine = server.regionCount();
    while (mine < share && !candidates.isEmpty()) {
      String next =
          candidates.stream()
              .min(
                  Comparator.comparingInt((String r) -> -count.get(where.get(r)))
                      .thenComparingInt(r -> -server.cachedMb(r))
                      .thenComparing(r -> r))
              .orElseThrow();
      candidates.remove(next);
      if (count.get(where.get(next)) <= mine + 1) {
        break; // its server would end up with fewer than this one: the counts are even already
      }
      count.merge(where.get(next), -1, Integer::sum);
      mine++;
      out.add(next);
    }
    return out.stream().sorted().toList();
  }

  private void start(PodView pod, ServerState server, List<String> regions) {
    if (t.expiring(pod.name())) {
      return; // that instance died again: this step expires it ({@link Crashes})
    }
    PodRoll r =
        new PodRoll()
            .setPod(pod.name())
            .setUid(pod.uid())
            .setStoppedBy(CAUSE)
            .setReason("Restarted in place: its regions go home")
            .setOldServer(server.id().toString())
            .setNewServer(server.id().toString())
            .setReadyAt(t.now().toString())
            .setRegions(regions);
    t.st.getInFlight().add(r);
    balancer.rememberBeforeDrain();
    t.to(r, Step.Reloading);
    t.actions.add(new Recommission(server.id(), regions));
    t.requeue(StepState.FAST);
    t.events.add(
        new Event(
            false,
            EventReason.RestartedInPlace,
            Narration.restartedInPlace(pod, server, regions, t.hbase())));
  }
}
