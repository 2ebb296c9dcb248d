package dev.hbase.cache.operator.roll;

import dev.hbase.cache.api.v1alpha1.status.ClusterSeen;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ServerId;
import dev.hbase.cache.operator.roll.RollModel.Action;
import dev.hbase.cache.operator.roll.RollModel.Drain;
import dev.hbase.cache.operator.roll.RollModel.Recommission;
import dev.hbase.cache.operator.roll.RollModel.SwitchBalancer;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a roll changes in HBase, as the operator last saw it ({@code status.rollout.cluster}): the
 * balancer switch and the servers marked decommissioned, from the master's answer at a step that
 * asked it, with that step's own switches, drains and recommissions applied once they were all
 * sent. The metrics export it beside what the roll holds ({@code balancerWasOn}, each in-flight
 * pod's old server), so that a balancer left off or a mark left behind alerts. Pure.
 */
public final class Owed {
  private Owed() {}

  /**
   * The cluster as the step leaves it: {@code h} with {@code sent} applied, in order; {@code
   * previous} when the master did not answer (a figure is kept as last seen, never guessed) or
   * showed the same, so that {@code since} says since when it has been so.
   */
  public static ClusterSeen after(ClusterSeen previous, ClusterSnapshot h, List<Action> sent) {
    if (h == null || !h.masterReachable()) {
      return previous;
    }
    Boolean on = h.balancerOn();
    Set<String> marked = new LinkedHashSet<>();
    h.decommissioned().forEach(s -> marked.add(s.toString()));
    for (Action a : sent) {
      if (a instanceof SwitchBalancer b) {
        on = b.on();
      } else if (a instanceof Drain d) {
        marked.add(d.server().toString());
      } else if (a instanceof Recommission r) {
        // as hbase.AdminHBaseCluster.recommission clears them: every mark at the old server's
        // host and port; with no regions to send and no reported instance there, only the marks
        // of instances that are gone
        var there = h.liveAt(r.oldServer().host(), r.oldServer().port());
        boolean marksOnly = r.regions().isEmpty() && (there.isEmpty() || !there.get().reported());
        for (ServerId m : h.decommissioned()) {
          if (m.sameEndpoint(r.oldServer()) && !(marksOnly && h.live(m).isPresent())) {
            marked.remove(m.toString());
          }
        }
      }
    }
    List<String> decommissioned = List.copyOf(marked);
    if (previous != null
        && java.util.Objects.equals(previous.getBalancerOn(), on)
        && decommissioned.equals(previous.getDecommissioned())) {
      return previous; // the same as before: since then (no status write for a look alone)
    }
    return new ClusterSeen()
        .setBalancerOn(on)
        .setDecommissioned(decommissioned)
        .setSince(h.at().toString());
  }

  /**
   * The marks a roll lost with its status, given back as the roll goes on: each server of the
   * second record ({@code recorded}, {@link Roller#marksToRecord}) that the state after the step no
   * longer holds ({@link Roller#marked}) and that the master still lists decommissioned gets its
   * mark cleared (a {@link Recommission} without regions: its regions stay where the lost drain put
   * them). Without this, only a policy delete cleared such a mark, and a roll that needed that
   * server as a drain target waited for it for good (found by the model check: a status wiped
   * mid-drain on a cluster scaled to two servers).
   */
  public static List<Action> orphanedMarks(
      List<String> recorded, RolloutStatus state, ClusterSnapshot h) {
    if (h == null || !h.masterReachable() || recorded.isEmpty()) {
      return List.of();
    }
    List<String> held = Roller.marked(state);
    java.util.ArrayList<Action> out = new java.util.ArrayList<>();
    for (String m : recorded) {
      if (held.contains(m) || h.decommissioned().stream().noneMatch(d -> d.toString().equals(m))) {
        continue;
      }
      try {
        out.add(new Recommission(ServerId.parse(m), List.of()));
      } catch (IllegalArgumentException notAServerName) {
        continue; // a record edited by hand
      }
    }
    return out;
  }

  /**
   * Whether the last look showed a server decommissioned: the master is asked again at each
   * reconcile until it shows none, so that the figure an alert reads is not left stale by a roll
   * that ended (an idle cluster is otherwise not asked; a balancer the roll owes back keeps it
   * asked anyway, {@code balancerWasOn}).
   */
  public static boolean looking(RolloutStatus previous) {
    ClusterSeen c = previous == null ? null : previous.getCluster();
    return c != null && c.getDecommissioned() != null && !c.getDecommissioned().isEmpty();
  }
}
