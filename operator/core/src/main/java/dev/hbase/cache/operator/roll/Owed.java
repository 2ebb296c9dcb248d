package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.ClusterSeen;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a roll owes HBase, and what it changed there as the operator last saw it ({@code
 * status.rollout.cluster}): the balancer switch and the target's servers marked decommissioned,
 * from the master's answer at a step that asked it, with that step's own switches, drains and
 * recommissions applied once they were all sent. The metrics export it beside what the roll holds
 * ({@code balancerWasOn}, each in-flight pod's old server), so that a balancer left off or a mark
 * left behind alerts. And the marks a roll lost with its status, given back. Pure.
 */
public final class Owed {
  private Owed() {}

  /**
   * The cluster as the step leaves it: {@code h} with {@code sent} applied, in order, its marks
   * those of the target's servers ({@code pods}: another StatefulSet's servers of the same HBase
   * are another policy's; null when the target cannot be observed: then those last seen that the
   * master still lists); {@code previous} when the master did not answer (a figure is kept as last
   * seen, never guessed) or showed the same, so that {@code since} says since when it has been so.
   * Call it only for a cluster shown to be the policy's ({@link OwnCluster}).
   */
  public static ClusterSeen after(
      ClusterSeen previous, ClusterSnapshot h, List<Action> sent, List<PodView> pods) {
    if (h == null || !h.masterReachable()) {
      return previous;
    }
    Boolean on = h.balancerOn();
    for (Action a : sent) {
      if (a instanceof SwitchBalancer b) {
        on = b.on();
      }
    }
    Set<String> decommissioned = new LinkedHashSet<>();
    List<ServerId> after = marksAfter(h, sent);
    for (ServerId m : after) {
      if (pods != null && pods.stream().anyMatch(p -> p.servesAs(m.host()))) {
        decommissioned.add(m.toString());
      }
    }
    if (pods == null && previous != null && previous.getDecommissioned() != null) {
      // the pods unknown (the target not observable): which servers are the target's cannot be
      // told, so those last seen stay unless the master no longer lists them
      previous.getDecommissioned().stream()
          .filter(m -> after.stream().anyMatch(a -> a.toString().equals(m)))
          .forEach(decommissioned::add);
    }
    if (previous != null
        && java.util.Objects.equals(previous.getBalancerOn(), on)
        && previous.getDecommissioned() != null
        && Set.copyOf(previous.getDecommissioned()).equals(decommissioned)) {
      return previous; // the same as before (in any order): since then, no status write for it
    }
    return new ClusterSeen()
        .setBalancerOn(on)
        .setDecommissioned(List.copyOf(decommissioned))
        .setSince(h.at().toString());
  }

  /**
   * The servers HBase lists decommissioned once {@code sent} is carried out: {@code h}'s, plus each
   * drained one, less those a recommission clears (as {@code hbase.AdminHBaseCluster.recommission}
   * clears them: every mark at the old server's host and port; with no regions to send and no
   * reported instance there, only the marks of instances that are gone).
   */
  public static List<ServerId> marksAfter(ClusterSnapshot h, List<Action> sent) {
    List<ServerId> marks = new ArrayList<>(h.decommissioned());
    for (Action a : sent) {
      if (a instanceof Drain d) {
        if (!marks.contains(d.server())) {
          marks.add(d.server());
        }
      } else if (a instanceof Recommission r) {
        var there = h.liveAt(r.oldServer().host(), r.oldServer().port());
        boolean marksOnly = r.regions().isEmpty() && (there.isEmpty() || !there.get().reported());
        marks.removeIf(m -> m.sameEndpoint(r.oldServer()) && !(marksOnly && h.live(m).isPresent()));
      }
    }
    return marks;
  }

  /**
   * The marks a roll lost with its status, given back as the roll goes on: each server of the
   * second record ({@code recorded}, {@link Roller#marksToRecord}) that the state after the step no
   * longer holds ({@link Roller#marked}) and that the master still lists decommissioned gets its
   * mark cleared (a {@link Recommission} without regions: its regions stay where the lost drain put
   * them). Not for a server at a host and port the state holds, or that this step's own actions
   * ({@code sent}) drain or recommission: those are the roll's (a new instance just drained), or
   * cleared already; nor for a server of no pod of the target's ({@code pods}), nor where the
   * recommission would clear a newer instance's own mark at the same host and port. Without this,
   * only a policy delete cleared such a mark, and a roll that needed that server as a drain target
   * waited for it for good (found by the model check: a status wiped mid-drain on a cluster scaled
   * to two servers). The caller's guard applies: the policy's own cluster only ({@link
   * Roller#step}, {@link Roller#hold}).
   */
  static List<Action> orphanedMarks(
      List<String> recorded,
      RolloutStatus state,
      ClusterSnapshot h,
      List<Action> sent,
      List<PodView> pods) {
    if (h == null || !h.masterReachable() || recorded.isEmpty()) {
      return List.of();
    }
    List<ServerId> busy = new ArrayList<>();
    for (String m : Roller.marked(state)) {
      parse(m).ifPresent(busy::add);
    }
    for (Action a : sent) {
      if (a instanceof Drain d) {
        busy.add(d.server());
      } else if (a instanceof Recommission r) {
        busy.add(r.oldServer());
      }
    }
    List<Action> out = new ArrayList<>();
    for (String m : recorded) {
      var id = parse(m);
      if (id.isEmpty()
          || busy.stream().anyMatch(b -> b.sameEndpoint(id.get()))
          || !h.decommissioned().contains(id.get())
          || pods.stream().noneMatch(p -> p.servesAs(id.get().host()))
          || collateral(h, id.get())) {
        continue; // a record edited by hand, the roll's own, not marked (any more), not a server
        // of the target's, or one whose recommission would clear another instance's mark
      }
      out.add(new Recommission(id.get(), List.of()));
      busy.add(id.get());
    }
    return out;
  }

  /**
   * Whether recommissioning {@code m} would clear the mark of another instance: a newer one live
   * and reported at its host and port that is marked itself (an administrator's mark on a restarted
   * pod). {@code AdminHBaseCluster.recommission} clears the live instance's mark too then.
   */
  private static boolean collateral(ClusterSnapshot h, ServerId m) {
    return h.liveAt(m.host(), m.port())
        .filter(l -> !l.id().equals(m) && l.reported() && h.decommissioned().contains(l.id()))
        .isPresent();
  }

  private static java.util.Optional<ServerId> parse(String serverName) {
    try {
      return java.util.Optional.of(ServerId.parse(serverName));
    } catch (IllegalArgumentException notAServerName) {
      return java.util.Optional.empty();
    }
  }

  /**
   * Whether the last look showed one of the target's servers decommissioned: the master is asked
   * again at each reconcile until it shows none (or stops answering: then the figure stays as last
   * seen), so that the figure an alert reads is not left stale by a roll that ended (an idle
   * cluster is otherwise not asked; a balancer the roll owes back keeps it asked anyway, {@code
   * balancerWasOn}).
   */
  public static boolean looking(RolloutStatus previous) {
    ClusterSeen c = previous == null ? null : previous.getCluster();
    return c != null && c.getDecommissioned() != null && !c.getDecommissioned().isEmpty();
  }
}
