package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.CrashStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Event;
import dev.hbase.cache.operator.roll.RollModel.EventReason;
import dev.hbase.cache.operator.roll.RollModel.ExpireServer;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Termination;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A death the kubelet reports is a death HBase hears of at once. A RegionServer whose process dies
 * without a goodbye (SIGKILL, a container OOM kill, a liveness kill's SIGKILL) stays live in the
 * master's view until its ZooKeeper session expires ({@code zookeeper.session.timeout}) or a new
 * instance registers at the same host and port; meanwhile every read of its regions waits (8 s
 * without a successful read in the cluster on kind, step 10). The kubelet knows within a second:
 * here the roller asks HBase to expire exactly that instance ({@link ExpireServer}: a
 * ServerCrashProcedure, its regions reassigned at once) and follows its regions until they serve
 * again, into {@code status.lastCrash} and a {@link EventReason#RegionServerCrashed} event.
 *
 * <p>The guard, so that no live server is ever expired:
 *
 * <ul>
 *   <li>only on the kubelet's word that the pod's RegionServer container <em>terminated</em> (its
 *       {@link PodView#lastTermination}: the container's state or last state {@code terminated},
 *       read only for the RegionServer container by name; an unready or frozen container is not
 *       terminated), within {@link #WINDOW};
 *   <li>only for an instance the master lists live at that pod's endpoint whose start code is older
 *       than the termination: it started in a container run that has ended (the pod's container
 *       runs one at a time, and a restarted one's instance starts after it). The start code is the
 *       RegionServer JVM's clock, the termination time the kubelet's: the same node's. The kubelet
 *       rounds it down to the second, which can only make an instance look newer, never older;
 *   <li>not for a pod being deleted or evicted ({@link Stops} drains those warm);
 *   <li>what carries it out checks again on the master, just before: the exact instance (host,
 *       port, start code) still listed live, and its endpoint not answering as that instance
 *       ({@code AdminHBaseCluster.expire}); and, like every HBase write, it is fenced by the leader
 *       lease.
 * </ul>
 *
 * <p>A frozen RegionServer (a GC storm, SIGSTOP) is not expired: the kubelet sees it running, and
 * nothing proves it gone; its ZooKeeper session does ({@code plan.SessionTimeout}). Nor is a server
 * on a lost node: no kubelet reports it.
 */
final class Crashes {
  /** A termination older than this is not looked at (nor is HBase asked because of it). */
  static final Duration WINDOW = Duration.ofMinutes(10);

  /** {@code status.lastCrash.toldHBase}: a ServerCrashProcedure for exactly that instance. */
  static final String EXPIRE = "Expire";

  private final StepState t;

  Crashes(StepState t) {
    this.t = t;
  }

  /**
   * Whether a step needs HBase for a crash: some pod's RegionServer container terminated within
   * {@link #WINDOW}, or the last crash's regions are still followed.
   */
  static boolean pending(List<PodView> pods, CrashStatus last, Instant now) {
    return open(last)
        || pods.stream()
            .anyMatch(
                p ->
                    p.lastTermination() != null
                        && p.lastTermination().finishedAt().isAfter(now.minus(WINDOW)));
  }

  static boolean open(CrashStatus c) {
    return c != null && c.getPendingRegions() != null;
  }

  /**
   * The instances the master lists live at this pod's endpoint that started before its RegionServer
   * container's last termination: each belonged to a container run that has ended. Pure.
   */
  static List<ServerState> diedIn(ClusterSnapshot h, PodView p) {
    Termination end = p.lastTermination();
    if (end == null) {
      return List.of();
    }
    long died = end.finishedAt().toEpochMilli();
    return h.live().stream()
        .filter(s -> p.servesAs(s.id().host()))
        .filter(s -> s.id().startCode() < died)
        .toList();
  }

  void admit() {
    ClusterSnapshot h = t.hbase();
    if (!h.masterReachable()) {
      if (open(t.lastCrash)) {
        t.requeue(StepState.POLL);
      }
      return;
    }
    for (PodView p : t.in.pods()) {
      Termination end = p.lastTermination();
      if (end == null || p.terminating() || !end.finishedAt().isAfter(t.now().minus(WINDOW))) {
        continue;
      }
      for (ServerState s : diedIn(h, p)) {
        boolean known = t.lastCrash != null && s.id().toString().equals(t.lastCrash.getServer());
        if (!known) {
          record(p, end, s);
        } else if (Duration.between(Instant.parse(t.lastCrash.getToldHBaseAt()), t.now())
                .compareTo(StepState.POLL)
            < 0) {
          continue; // told a moment ago: the master may not have taken it yet
        } else {
          // still listed live: the expiry was refused (the check found it answering) or not
          // taken; asked again every few seconds (HBase takes one procedure per server)
          t.lastCrash.setToldHBaseAt(t.now().toString());
          t.lastCrash.setMessage(told(t.lastCrash));
        }
        t.actions.add(new ExpireServer(s.id(), p.name()));
        t.requeue(StepState.FAST);
      }
    }
    follow(h);
  }

  private void record(PodView p, Termination end, ServerState s) {
    if (open(t.lastCrash)) {
      close("its regions were still followed when " + p.name() + "'s RegionServer died too");
    }
    t.lastCrash =
        new CrashStatus()
            .setPod(p.name())
            .setServer(s.id().toString())
            .setReason(end.reason())
            .setExitCode(end.exitCode())
            .setTerminatedAt(end.finishedAt().toString())
            .setToldHBase(EXPIRE)
            .setToldHBaseAt(t.now().toString())
            .setRegions(s.regionCount())
            .setPendingRegions(s.regions().stream().sorted().toList());
    t.lastCrash.setMessage(told(t.lastCrash));
  }

  /**
   * The last crash's regions: those that serve on a live RegionServer leave the list; once none is
   * left, the figure and the event. A region listed nowhere once the instance is gone and nothing
   * is in transition is no longer there to serve (split, merged, its table dropped). Followed for
   * at most podReadyTimeout after the termination.
   */
  private void follow(ClusterSnapshot h) {
    CrashStatus c = t.lastCrash;
    if (!open(c)) {
      return;
    }
    ServerId dead = ServerId.parse(c.getServer());
    Map<String, ServerId> where = h.locations();
    boolean settled = h.live(dead).isEmpty() && h.regionsInTransition() == 0;
    List<String> left =
        c.getPendingRegions().stream()
            .filter(r -> where.containsKey(r) ? where.get(r).equals(dead) : !settled)
            .toList();
    Instant died = Instant.parse(c.getTerminatedAt());
    if (left.isEmpty()) {
      c.setPendingRegions(null)
          .setRegionsServingAt(t.now().toString())
          .setRegionsUnavailableSeconds(seconds(died, t.now()));
      c.setMessage(
          told(c)
              + String.format(
                  Locale.ROOT,
                  "; its regions served again %.1f s after the termination",
                  c.getRegionsUnavailableSeconds()));
      t.events.add(new Event(true, EventReason.RegionServerCrashed, c.getMessage()));
    } else if (Duration.between(died, t.now()).compareTo(t.s.podReadyTimeout()) > 0) {
      c.setPendingRegions(left);
      close(
          "not followed further: podReadyTimeout "
              + t.s.podReadyTimeout().toSeconds()
              + " s after the termination");
    } else {
      c.setPendingRegions(left);
      t.requeue(StepState.FAST);
    }
  }

  /** The open crash leaves the status's care with its regions not all serving. */
  private void close(String why) {
    CrashStatus c = t.lastCrash;
    c.setMessage(
        told(c)
            + "; "
            + c.getPendingRegions().size()
            + " of its "
            + c.getRegions()
            + " regions did not serve yet, "
            + why);
    c.setPendingRegions(null);
    t.events.add(new Event(true, EventReason.RegionServerCrashed, c.getMessage()));
  }

  /** What the kubelet reported and what the operator told HBase, in a sentence. */
  static String told(CrashStatus c) {
    Instant died = Instant.parse(c.getTerminatedAt());
    return c.getPod()
        + "'s RegionServer container terminated ("
        + (c.getReason() == null ? "no reason given" : c.getReason())
        + (c.getExitCode() == null ? "" : ", exit code " + c.getExitCode())
        + ") at "
        + c.getTerminatedAt()
        + "; HBase still counted its instance "
        + c.getServer()
        + " live with "
        + c.getRegions()
        + " regions: the operator had HBase expire it at "
        + c.getToldHBaseAt()
        + String.format(
            Locale.ROOT,
            " (%.1f s after), its regions reassigned at once instead of after its ZooKeeper"
                + " session timeout",
            seconds(died, Instant.parse(c.getToldHBaseAt())));
  }

  private static double seconds(Instant from, Instant to) {
    return Math.round(Duration.between(from, to).toMillis() / 100.0) / 10.0;
  }
}
