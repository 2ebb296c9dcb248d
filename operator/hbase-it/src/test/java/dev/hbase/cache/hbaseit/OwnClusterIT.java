package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.RolloutSpec;
import dev.hbase.cache.api.v1alpha1.status.RolloutStatus;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.roll.RollModel;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import dev.hbase.cache.operator.roll.Roller;
import dev.hbase.cache.operator.roll.Zone;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;

/**
 * HBase actions reach only the policy's own cluster (issue 49, point 4), on real HBase: two
 * clusters at once, each standing for one namespace's HBase, their RegionServers registered as the
 * chart registers them, under their pod's DNS name ({@code
 * rs-<i>.hbase-regionserver.<namespace>.svc.cluster.local}, resolved to each server's own loopback
 * address through a hosts file the daemons read, and this JVM too: the hbase-it pom runs this class
 * in a JVM of its own with {@code -Djdk.net.hosts.file}, since the operator's snapshot reads
 * RegionServer groups on a RegionServer).
 *
 * <p>The attack as reproduced on the demo cluster: a policy in namespace {@code tenant} whose
 * client settings name the quorum of namespace {@code victim}'s cluster, its target a StatefulSet
 * of {@code tenant} named like the victim's, with the victim's replica count and Ready pods of
 * nothing. The operator's roller, unchanged, decides on what the victim's master says, and its
 * HBase actions go to the victim's master through the operator's own client: the roll is refused
 * (Blocked, ForeignCluster, a Warning event), and the victim's balancer stays on, no server is
 * decommissioned, no region moves. The controls: the same roller on the tenant's own cluster goes
 * on, and a policy of the victim's own namespace gets the victim's balancer switched off, the first
 * write of a roll.
 */
class OwnClusterIT {
  static final String SERVICE = "hbase-regionserver";
  static final String TARGET = "rev-new";

  static String podName(String ns, int i) {
    return "rs-" + i + "." + SERVICE + "." + ns + ".svc.cluster.local";
  }

  @Test
  void aPolicyNamingAnotherNamespacesQuorumSendsItNothing() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        System.getProperty("jdk.net.hosts.file") != null,
        "runs in the hbase-it pom's own-cluster execution: this JVM must resolve the pods' DNS"
            + " names through a hosts file of its own");
    LocalHBase.RegionServerSettings lru =
        Plans.settings(Plans.plan(CacheMode.Lru, java.nio.file.Path.of("/unused")));
    try (LocalHBase victim = LocalHBase.startNamed("own-victim", 2, 21, i -> podName("victim", i));
        LocalHBase tenant = LocalHBase.startNamed("own-tenant", 1, 31, i -> podName("tenant", i))) {
      victim.startRegionServer(0, lru);
      victim.startRegionServer(1, lru);
      tenant.startRegionServer(0, lru);
      AdminHBaseCluster victimAdmin = victim.admin();
      AdminHBaseCluster tenantAdmin = tenant.admin();
      // two clusters start at once on two shared cores: a master took 86 s to initialize at load
      // 18, and a snapshot asked before it is active can wait long, so the bound is generous
      Duration up = Duration.ofSeconds(300);
      victim.awaitRegionServerReported(victimAdmin, 0, up);
      victim.awaitRegionServerReported(victimAdmin, 1, up);
      tenant.awaitRegionServerReported(tenantAdmin, 0, up);
      assertThat(victimAdmin.snapshot().live())
          .extracting(s -> s.id().host())
          .containsExactlyInAnyOrder(podName("victim", 0), podName("victim", 1));

      // the victim's table: its regions on both servers (the master's assignment, balancer on)
      try (Admin raw = victim.connection().getAdmin()) {
        byte[][] splits = new byte[5][];
        for (int i = 0; i < 5; i++) {
          splits[i] = Bytes.toBytes("row-" + (i + 1));
        }
        // async: the test JVM does not resolve the servers' names (only the daemons do), and
        // the client's own wait for the table reads hbase:meta on a RegionServer
        raw.createTableAsync(
            TableDescriptorBuilder.newBuilder(TableName.valueOf("victims"))
                .setColumnFamily(ColumnFamilyDescriptorBuilder.of("f"))
                .build(),
            splits);
      }
      await("the victim's 6 regions and hbase:meta open on both servers")
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                ClusterSnapshot s = victimAdmin.snapshot();
                return s.regionsInTransition() == 0
                    && s.live().stream().mapToInt(x -> x.regionCount()).sum() >= 7
                    && s.live().stream().allMatch(x -> x.regionCount() > 0);
              });
      ClusterSnapshot before = victimAdmin.snapshot();
      assertThat(before.balancerOn()).isTrue();

      // the tenant's policy: its pods named like the victim's, Ready, on the old revision
      Zone tenantZone = new Zone("tenant", "cluster.local");
      List<PodView> dummies = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        dummies.add(pod(tenantZone, i, "127.0.0." + (41 + i)));
      }
      // its client: the operator's, with the settings the policy names (the victim's quorum)
      Drive attack;
      try (AdminHBaseCluster asTenant =
          AdminHBaseCluster.connect(victim.clientSettings(), opts())) {
        attack = drive(asTenant, dummies, tenantZone, 8);
        assertThat(attack.decisions).allSatisfy(d -> assertThat(d.actions()).isEmpty());
        assertThat(attack.blocked()).as("steps refused").isEqualTo(attack.decisions.size());
        assertThat(attack.events)
            .as("one Warning event, not one per step")
            .singleElement()
            .satisfies(
                e -> {
                  assertThat(e.warning()).isTrue();
                  assertThat(e.why()).isEqualTo(RollModel.EventReason.ForeignCluster);
                  assertThat(e.message())
                      .contains("2 of its 2 live RegionServers are no pod of it")
                      .doesNotContain("victim");
                });
        assertThat(attack.sent).isEmpty();
      }
      ClusterSnapshot after = victimAdmin.snapshot();
      int decommissioned;
      try (Admin raw = victim.connection().getAdmin()) {
        assertThat(raw.isBalancerEnabled()).as("the victim's balancer").isTrue();
        decommissioned = raw.listDecommissionedRegionServers().size();
        assertThat(decommissioned).as("decommissioned").isZero();
      }
      assertThat(victim.zkChildren("/hbase/draining")).isEmpty();
      assertThat(after.locations()).as("no region moved").isEqualTo(before.locations());

      // the controls: the same roller on the tenant's own cluster goes on (one server: it restarts
      // in place, no drain), and on the victim's cluster as the victim's own policy it writes
      Drive own = drive(tenantAdmin, List.of(pod(tenantZone, 0, "127.0.0.51")), tenantZone, 2);
      assertThat(own.blocked()).as("the tenant's own cluster refused").isZero();
      assertThat(own.sent).contains(new RollModel.DeletePod("rs-0", "rs-0-uid"));
      Zone victimZone = new Zone("victim", "cluster.local");
      Drive roll =
          drive(
              victimAdmin,
              List.of(pod(victimZone, 0, "127.0.0.61"), pod(victimZone, 1, "127.0.0.62")),
              victimZone,
              3);
      assertThat(roll.blocked()).isZero();
      assertThat(roll.sent).contains(new RollModel.SwitchBalancer(false));
      try (Admin raw = victim.connection().getAdmin()) {
        assertThat(raw.isBalancerEnabled())
            .as("the victim's balancer, off for its own roll")
            .isFalse();
      }
      System.out.printf(
          "RESULT own cluster: a roll whose quorum names another namespace's cluster refused in"
              + " %d of %d steps (%s), that cluster's balancer on, %d decommissioned, %d of %d"
              + " regions where they were; the victim's own policy: the same roller sent %s%n",
          attack.blocked(),
          attack.decisions.size(),
          RollModel.Reason.ForeignCluster,
          decommissioned,
          before.locations().entrySet().stream()
              .filter(e -> e.getValue().equals(after.locations().get(e.getKey())))
              .count(),
          before.locations().size(),
          roll.sent);
    }
  }

  static AdminHBaseCluster.Options opts() {
    return AdminHBaseCluster.Options.defaults().withMoves(AdminHBaseCluster.Moves.BATCH);
  }

  /** A Ready pod of the target StatefulSet {@code rs} in the zone, on the old revision. */
  static PodView pod(Zone zone, int i, String ip) {
    String name = "rs-" + i;
    return new PodView(
        name,
        name + "-uid",
        i,
        "rev-old",
        true,
        false,
        null,
        ip,
        false,
        false,
        null,
        null,
        zone.podName(name, SERVICE));
  }

  /** What the loop saw and sent. */
  record Drive(List<Roller.Decision> decisions, List<RollModel.Event> events, List<Object> sent) {
    long blocked() {
      return decisions.stream()
          .filter(
              d ->
                  d.outcome() instanceof RollModel.Blocked b
                      && b.reason() == RollModel.Reason.ForeignCluster)
          .count();
    }
  }

  /**
   * The operator's loop ({@code RollStep}): a step on what the connected master says, its actions
   * carried out in order on the policy's connection (a pod delete only recorded: the pods are
   * nobody's), the state kept unless an action failed; {@code steps} times, a second apart.
   */
  static Drive drive(AdminHBaseCluster admin, List<PodView> pods, Zone zone, int steps)
      throws InterruptedException {
    RolloutStatus state = null;
    List<Roller.Decision> decisions = new ArrayList<>();
    List<RollModel.Event> events = new ArrayList<>();
    List<Object> sent = new ArrayList<>();
    RollModel.Settings settings =
        new RollModel.Settings(
            TARGET,
            RolloutSpec.Strategy.DrainAndReload,
            1,
            false,
            Duration.ofMinutes(5),
            null,
            null,
            Duration.ofMinutes(2),
            false,
            false,
            0);
    for (int i = 0; i < steps; i++) {
      ClusterSnapshot snap = admin.snapshot();
      Roller.Decision d =
          Roller.step(
              state,
              new RollModel.Input(
                  settings, pods, snap, Map.of(), Instant.now(), pods.size(), List.of(), zone));
      decisions.add(d);
      boolean acted = true;
      for (RollModel.Action a : d.actions()) {
        sent.add(a);
        try {
          if (a instanceof RollModel.SwitchBalancer b) {
            admin.balancer(b.on());
          } else if (a instanceof RollModel.Drain x) {
            admin.drain(x.server(), x.targets());
          } else if (a instanceof RollModel.Recommission r) {
            admin.recommission(r.oldServer(), r.regions());
          }
        } catch (HBaseClusterException e) {
          System.out.println("OwnClusterIT: " + a + " failed: " + e);
          acted = false;
          break;
        }
      }
      if (acted) {
        events.addAll(d.events());
        state = d.state();
      }
      Thread.sleep(1000);
    }
    return new Drive(decisions, events, sent);
  }
}
