package dev.hbase.cache.operator.roll;

import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.ClusterSnapshot.ServerState;
import dev.hbase.cache.operator.hbase.ServerId;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a drained server's regions go: for each region, the server that already caches it best.
 *
 * <p>HBase's own offload ({@code decommissionRegionServers(..., true)}) sends each region to a
 * random server, which has never cached it: every read of the drained server's regions is a miss
 * until the region comes back (measured on the demo cluster: 0.89 of the cluster's data reads from
 * cache during a roll, 1.000 before and after). Here a region goes to the candidate with the most
 * of its blocks cached ({@code ServerMetrics.getRegionCachedInfo()}: a persistent cache keeps the
 * blocks of regions a server held before, across moves and restarts); with no cached blocks
 * anywhere, to the candidate its name hashes highest with (rendezvous hashing). Both are stable:
 * the next roll sends each region where the last one did, where its blocks still are.
 *
 * <p>No candidate gets more than its share ({@code ceil(regions / candidates)}): a server that
 * caches everything does not take the whole load. Regions with the most cached are placed first.
 * hbase:meta is placed last, on the candidate that holds the fewest regions now (within the share
 * or not: it is one region, and the others go home after the restart). Pure and deterministic.
 *
 * <p>With RegionServer groups ({@code hbase:rsgroup}) the candidates are the servers of the drained
 * server's own group ({@link #sameGroup}): a group's tables are served by its servers only, and a
 * region moved to another group's server would serve there until HBase's balancer sent it back.
 */
public final class DrainTargets {
  private DrainTargets() {}

  /**
   * @param regions encoded names of the regions to move
   * @param candidates servers that may take them (live, reported, not decommissioned, not
   *     restarting)
   * @return region -> target; empty when there is no candidate
   */
  public static Map<String, ServerId> plan(List<String> regions, List<ServerState> candidates) {
    Map<String, ServerId> out = new LinkedHashMap<>();
    if (candidates.isEmpty() || regions.isEmpty()) {
      return out;
    }
    int share = (regions.size() + candidates.size() - 1) / candidates.size();
    Map<ServerId, Integer> taken = new HashMap<>();
    List<String> order =
        regions.stream()
            .distinct()
            .sorted(
                Comparator.comparing((String r) -> RollModel.META_REGION.equals(r))
                    .thenComparingInt(r -> -bestCached(r, candidates))
                    .thenComparing(r -> r))
            .toList();
    for (String region : order) {
      boolean meta = RollModel.META_REGION.equals(region);
      // hbase:meta, last: to the candidate that holds the fewest regions now, beyond the share if
      // need be. The drained server's other regions go home after its restart and meta does not
      // (the reload leaves it out), so where each candidate ends is what it holds now, plus meta.
      // By cache or hash it kept going where it had been, and that server ended the roll one over
      // its share (4 / 2 / 2 on kind).
      Comparator<ServerState> by =
          meta
              ? Comparator.comparingInt(ServerState::regionCount)
                  .thenComparingInt(c -> taken.getOrDefault(c.id(), 0))
                  .thenComparing(preference(region))
              : preference(region);
      ServerState to =
          candidates.stream()
              .filter(c -> meta || taken.getOrDefault(c.id(), 0) < share)
              .min(by)
              .orElseThrow(); // share * candidates >= regions: someone has room
      taken.merge(to.id(), 1, Integer::sum);
      out.put(region, to.id());
    }
    return out;
  }

  /**
   * Whether {@code candidate} is in {@code drained}'s RegionServer group (always, on a cluster
   * without groups). The group comes from the snapshot ({@link ClusterSnapshot#groupOf}).
   */
  public static boolean sameGroup(ClusterSnapshot h, ServerId drained, ServerId candidate) {
    return java.util.Objects.equals(h.groupOf(drained), h.groupOf(candidate));
  }

  /** Most cached first, then the highest rendezvous hash. */
  static Comparator<ServerState> preference(String region) {
    return Comparator.comparingInt((ServerState c) -> -c.cachedMb(region))
        .thenComparing(c -> -rendezvous(region, c.id()), Comparator.naturalOrder());
  }

  private static int bestCached(String region, List<ServerState> candidates) {
    return candidates.stream().mapToInt(c -> c.cachedMb(region)).max().orElse(0);
  }

  /**
   * The region's weight on a server: a hash of both names, the server by host and port (a restarted
   * server keeps them, not its start code).
   */
  static long rendezvous(String region, ServerId server) {
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256")
              .digest((region + "|" + server.hostAndPort()).getBytes(StandardCharsets.UTF_8));
      long v = 0;
      for (int i = 0; i < 8; i++) {
        v = (v << 8) | (d[i] & 0xff);
      }
      return v >>> 1; // non-negative
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e); // every JVM has SHA-256
    }
  }
}
