package dev.hbase.cache.operator.connection;

import dev.hbase.cache.operator.hbase.ClusterSnapshot;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.RecommissionResult;
import dev.hbase.cache.operator.hbase.ServerId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * One cached connection of {@link HBaseClusters}, with a thread of its own: the thread connects,
 * then carries out every call, and each caller waits for it within a deadline. A ZooKeeper, master
 * or RegionServer that never answers holds this thread and the callers of this connection for their
 * deadline, nothing else: no other cluster's connection, no map lock.
 *
 * <p>The HBase client has its own timeouts ({@code AdminHBaseCluster.Options}), and most calls end
 * by them; these deadlines are the bound on what those do not cover (a server that accepts a
 * connection and never answers). A call past its deadline leaves the connection broken: {@link
 * HBaseClusters} closes it (its thread is interrupted) and connects afresh at the next use. One
 * thread per connection also serializes the calls of the policies that share one (HBase's {@code
 * Admin} is not made for concurrent use), and each call holds one of its namespace's and the
 * operator's call slots while it runs ({@link CallSlots}).
 */
final class BoundedCluster implements HBaseCluster {
  private final String what;
  private final ExecutorService thread;
  private final Executor closer;
  private final CompletableFuture<HBaseCluster> connected = new CompletableFuture<>();
  private final LongSupplier nanoTime;
  private final long connectBy;
  private final Duration connectDeadline;
  private final Duration callDeadline;
  private volatile boolean broken;
  private final CallSlots slots;
  private final String namespace;

  /**
   * @param what the connection in messages (namespace and quorum)
   * @param connect opens the connection, on this connection's own thread
   * @param closer where a connection is closed (closing may wait for a server), never the caller
   * @param slots the calls at once, of the namespace and in all: each call holds one while it runs
   * @param namespace the namespace of the policies that use it
   */
  BoundedCluster(
      String what,
      Supplier<HBaseCluster> connect,
      Duration connectDeadline,
      Duration callDeadline,
      Executor closer,
      LongSupplier nanoTime,
      CallSlots slots,
      String namespace) {
    this.what = what;
    this.slots = slots;
    this.namespace = namespace;
    this.closer = closer;
    this.nanoTime = nanoTime;
    this.connectDeadline = connectDeadline;
    this.callDeadline = callDeadline;
    this.connectBy = nanoTime.getAsLong() + connectDeadline.toNanos();
    this.thread =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "hbase-connection " + what);
              t.setDaemon(true);
              return t;
            });
    thread.execute(
        () -> {
          HBaseCluster c;
          try {
            c = connect.get();
          } catch (RuntimeException | Error e) {
            broken = true;
            connected.completeExceptionally(e);
            return;
          }
          if (c instanceof dev.hbase.cache.operator.hbase.AdminHBaseCluster a) {
            a.gate(
                () -> {
                  try {
                    return slots.take(namespace, callDeadline.dividedBy(3), what)::close;
                  } catch (HBaseClusterException e) {
                    throw new java.io.IOException(e.getMessage(), e);
                  }
                });
          }
          if (!connected.complete(c)) {
            closer.execute(c::close); // closed while it connected: nobody else will close it
          }
        });
  }

  /**
   * Waits for the connect until its deadline at most (no longer once it is past): whether it is
   * open. A connect that failed leaves this broken.
   */
  boolean awaitConnected() {
    try {
      connected.get(Math.max(0, connectBy - nanoTime.getAsLong()), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Whether it should be closed and made again: its connect failed, a call outlived its deadline,
   * or it was closed. (A connect still running past its deadline is not broken: no second one is
   * started meanwhile, its callers fail at once, and it is broken if it fails.)
   */
  boolean broken() {
    return broken;
  }

  /** Whether the connect is still running. */
  boolean connecting() {
    return !connected.isDone();
  }

  @Override
  public ClusterSnapshot snapshot() {
    try {
      return call(HBaseCluster::snapshot);
    } catch (HBaseClusterException e) {
      return ClusterSnapshot.unreachable(Instant.now(), e.getMessage());
    }
  }

  @Override
  public void drain(ServerId server, Map<String, ServerId> targets) throws HBaseClusterException {
    call(
        c -> {
          c.drain(server, targets);
          return null;
        });
  }

  @Override
  public RecommissionResult recommission(ServerId server, List<String> encodedRegionNames)
      throws HBaseClusterException {
    return call(c -> c.recommission(server, encodedRegionNames));
  }

  @Override
  public void move(String encodedRegionName, ServerId target) throws HBaseClusterException {
    call(
        c -> {
          c.move(encodedRegionName, target);
          return null;
        });
  }

  @Override
  public boolean balancer(boolean on) throws HBaseClusterException {
    return call(c -> c.balancer(on));
  }

  @Override
  public List<ServerId> decommissioned() throws HBaseClusterException {
    return call(HBaseCluster::decommissioned);
  }

  @Override
  public dev.hbase.cache.operator.hbase.ExpireResult expire(ServerId server)
      throws HBaseClusterException {
    return call(c -> c.expire(server));
  }

  @Override
  public void stopServer(ServerId server, String why) throws HBaseClusterException {
    call(
        c -> {
          c.stopServer(server, why);
          return null;
        });
  }

  /**
   * Closes it without waiting: its thread is interrupted, and the connection (once its connect
   * ends, if it ever does) is closed on the closer.
   */
  @Override
  public void close() {
    broken = true;
    thread.shutdownNow();
    connected.cancel(false); // still connecting: the connect closes what it opens
    connected.whenCompleteAsync(
        (c, failed) -> {
          if (c != null) {
            try {
              c.close();
            } catch (RuntimeException e) {
              // a connection that fails to close is dropped all the same
            }
          }
        },
        closer);
  }

  private interface Call<T> {
    T on(HBaseCluster c) throws HBaseClusterException;
  }

  private <T> T call(Call<T> call) throws HBaseClusterException {
    if (!awaitConnected()) {
      if (connecting()) {
        throw new HBaseClusterException(
            "connecting to HBase ("
                + what
                + ") did not finish within "
                + connectDeadline.toSeconds()
                + " s");
      }
      throw new HBaseClusterException(
          "cannot connect to HBase (" + what + "): " + failure(), failureCause());
    }
    HBaseCluster c = connected.join();
    Future<T> f;
    try {
      // a slot is waited for a third of the deadline at most: a busy operator fails the call,
      // it does not break the connection
      Duration slotWait = callDeadline.dividedBy(3);
      f =
          thread.submit(
              () -> {
                CallSlots.Slot slot = slots.take(namespace, slotWait, what);
                try {
                  return call.on(c);
                } finally {
                  slot.close();
                }
              });
    } catch (RejectedExecutionException closed) {
      throw new HBaseClusterException("the HBase connection (" + what + ") was closed");
    }
    try {
      return f.get(callDeadline.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      broken = true;
      f.cancel(true);
      throw new HBaseClusterException(
          "HBase (" + what + ") did not answer within " + callDeadline.toSeconds() + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      f.cancel(true);
      throw new HBaseClusterException("interrupted waiting for HBase (" + what + ")");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof HBaseClusterException h) {
        throw h;
      }
      throw new HBaseClusterException(
          "HBase (" + what + ") call failed: " + e.getCause(), e.getCause());
    } catch (java.util.concurrent.CancellationException e) {
      throw new HBaseClusterException("the HBase connection (" + what + ") was closed");
    }
  }

  private String failure() {
    Throwable t = failureCause();
    return t == null ? "closed" : String.valueOf(t.getMessage());
  }

  private Throwable failureCause() {
    try {
      connected.getNow(null);
      return null;
    } catch (java.util.concurrent.CompletionException e) {
      return e.getCause();
    } catch (java.util.concurrent.CancellationException e) {
      return e;
    }
  }

  @Override
  public String toString() {
    return "HBase connection (" + what + ")";
  }
}
