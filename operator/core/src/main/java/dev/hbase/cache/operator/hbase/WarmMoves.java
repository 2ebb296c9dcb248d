package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.logging.LogContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Region moves in the background, one master call per region and {@link #THREADS} at once: {@code
 * Admin.move}, for which the master first warms the region up on its target ({@code
 * hbase.master.warmup.before.move}, default true: the target opens the region's stores and HFiles
 * while the region is still served where it is), then closes and reopens it, as HBase's own
 * RegionMover does. Measured ({@code make bench-roll}): a reload onto a RegionServer that has just
 * started takes half as long as without the warm-up, and so do the reads that wait for it.
 *
 * <p>A move is checked again just before it starts: its target must still be live under the same
 * start code and not decommissioned (queued behind other moves, it may have gone or been marked
 * meanwhile; the master would send the region to a random server then). Until it starts it can be
 * cancelled ({@link #cancelUnlessTo}); once started it runs to its end in the master. A region
 * queued or moving is not queued again. Nothing here waits for HBase on the caller's thread.
 *
 * <p>A queued move starts only while this operator leads ({@code leading}): one that lost its
 * leader lease sends nothing more while it exits, and its successor decides afresh.
 *
 * <p>A move's log lines carry the logging context of the reconcile that queued it (the policy).
 */
final class WarmMoves implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WarmMoves.class);

  /**
   * Moves running at once: master RPC handlers this client holds (each move waits in the master
   * until the region is open on its target). A RegionServer opens 3 regions at a time by default
   * ({@code hbase.regionserver.executor.openregion.threads}), so more at once would queue there
   * with the regions already closed.
   */
  static final int THREADS = 4;

  /** The master calls a move needs: the Admin API in production. */
  interface Master {
    /** RegionServers that are live and not decommissioned. */
    Collection<ServerId> takers() throws IOException;

    /** Moves the region to the server and returns once it is open there (or throws). */
    void move(String encodedRegionName, ServerId target) throws IOException;
  }

  /** A queued move: it either starts or is cancelled, whichever claims it first. */
  private static final class Pending {
    final ServerId target;
    private final AtomicBoolean claimed = new AtomicBoolean();

    Pending(ServerId target) {
      this.target = target;
    }

    /** Claims the move to start it or to cancel it: true for the first caller only. */
    boolean claim() {
      return claimed.compareAndSet(false, true);
    }
  }

  private final Master master;
  private final BooleanSupplier leading;
  private final ExecutorService threads;
  private final Map<String, Pending> pending = new ConcurrentHashMap<>();

  /**
   * RegionServer instances a move of ours has opened a region on: no longer fresh, before the
   * master's report says they serve it.
   */
  private final Set<ServerId> opened = ConcurrentHashMap.newKeySet();

  WarmMoves(Master master) {
    this(() -> true, master);
  }

  WarmMoves(BooleanSupplier leading, Master master) {
    this.master = master;
    this.leading = leading;
    AtomicInteger n = new AtomicInteger();
    this.threads =
        Executors.newFixedThreadPool(
            THREADS,
            r -> {
              Thread t = new Thread(r, "hbase-region-move-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /** Queues a move of each region to the target, unless one is queued or running already. */
  void send(ServerId target, List<String> regions) throws HBaseClusterException {
    for (String region : regions) {
      Pending p = new Pending(target);
      if (pending.putIfAbsent(region, p) == null) {
        queue(region, p, () -> {});
      }
    }
  }

  /**
   * Like {@link #send}, onto a RegionServer that has just started (a reload, a homecoming): the
   * first region goes alone, the rest once it is open there. A fresh JVM's first open is its
   * slowest (classes loaded, code not compiled yet): alone, only that region's reads wait for it,
   * not those of {@link #THREADS} regions closed at once. The rest are reserved at once (a resend
   * does not queue them beside the first; a drain given up cancels them as queued moves). Once a
   * move to this instance has ended, or when the target already serves a region by the master's own
   * report ({@code servesRegions}: it has opened one, whoever moved it there, also before this
   * operator started), its moves go {@link #THREADS} at once.
   */
  void sendFirstAlone(ServerId target, List<String> regions, boolean servesRegions)
      throws HBaseClusterException {
    if (regions.size() < 2 || servesRegions || opened.contains(target)) {
      send(target, regions);
      return;
    }
    List<String> rest = new ArrayList<>();
    List<Pending> held = new ArrayList<>();
    String first = null;
    Pending firstMove = null;
    for (String region : regions) {
      Pending p = new Pending(target);
      if (pending.putIfAbsent(region, p) != null) {
        continue; // queued or moving already
      }
      if (first == null) {
        first = region;
        firstMove = p;
      } else {
        rest.add(region);
        held.add(p);
      }
    }
    if (first == null) {
      return;
    }
    Runnable release =
        () -> {
          for (int i = 0; i < rest.size(); i++) {
            try {
              queue(rest.get(i), held.get(i), () -> {});
            } catch (HBaseClusterException | RuntimeException e) {
              pending.remove(rest.get(i), held.get(i)); // not left reserved: a resend sends it
              LOG.info("not moving {} to {}: {}", rest.get(i), target, e.toString());
            }
          }
        };
    try {
      queue(first, firstMove, release);
    } catch (HBaseClusterException e) {
      for (int i = 0; i < rest.size(); i++) {
        pending.remove(rest.get(i), held.get(i));
      }
      throw e;
    }
  }

  /**
   * Runs the move on a pool thread unless it is cancelled first; {@code then} runs after it, on the
   * same thread, whatever its outcome.
   */
  private void queue(String region, Pending p, Runnable then) throws HBaseClusterException {
    try {
      threads.execute(
          LogContext.carry(
              () -> {
                try {
                  if (p.claim()) { // else cancelled while queued
                    moveNow(region, p.target);
                  }
                } finally {
                  pending.remove(region, p);
                  then.run();
                }
              }));
    } catch (RejectedExecutionException e) {
      pending.remove(region, p);
      throw new HBaseClusterException("move " + region + " to " + p.target + ": closed", e);
    }
  }

  private void moveNow(String region, ServerId target) {
    try {
      if (!leading.getAsBoolean()) {
        LOG.warn("not moving {} to {}: this operator no longer leads", region, target);
        return;
      }
      if (!master.takers().contains(target)) {
        LOG.info("not moving {} to {}: it is gone or decommissioned since", region, target);
        return;
      }
      master.move(region, target);
      if (opened.size() > 1000) {
        opened.clear(); // one entry per RegionServer instance moved to: bounded
      }
      opened.add(target);
    } catch (IOException | RuntimeException e) {
      LOG.info("move of {} to {} failed: {}", region, target, e.toString());
    }
  }

  /**
   * Cancels the queued moves of these regions to any server but one at {@code server}'s host and
   * port (a drain given up: the regions stay or go back); returns the regions cancelled. Moves that
   * started already are not stopped.
   */
  List<String> cancelUnlessTo(ServerId server, Collection<String> regions) {
    List<String> cancelled = new ArrayList<>();
    for (String region : regions) {
      Pending p = pending.get(region);
      if (p != null && !p.target.sameEndpoint(server) && p.claim()) {
        pending.remove(region, p);
        cancelled.add(region);
      }
    }
    return cancelled;
  }

  /** Regions queued or moving. */
  Set<String> regions() {
    return Set.copyOf(pending.keySet());
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
