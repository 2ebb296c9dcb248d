package dev.hbase.cache.operator.connection;

import dev.hbase.cache.operator.hbase.HBaseClusterException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * How many HBase calls run at once: at most {@code perNamespace} of one namespace's connections,
 * and {@code inAll} in the operator. Each call's answer may take up to a sixteenth of the heap once
 * parsed ({@code RpcAnswerCap}), and HBase converts it before the call returns; a connection runs
 * its calls one at a time ({@link BoundedCluster}), but a tenant can make 8 connections (one per
 * quorum its policies name), so without this one namespace's answers could take half the heap at
 * once. With the defaults (2 per namespace, 6 in all) the answers in flight take at most some 6/16
 * of the heap, and one tenant holds at most 2 of the 6 slots. A slot is waited for a bounded time;
 * then the call fails, saying why, and the connection stays as it is.
 */
final class CallSlots {
  private final int perNamespace;
  private final Semaphore inAll;
  private final Map<String, Semaphore> byNamespace = new ConcurrentHashMap<>();

  CallSlots(int perNamespace, int inAll) {
    this.perNamespace = perNamespace;
    this.inAll = new Semaphore(inAll, true);
  }

  /** A slot held: given back by {@link #close}. */
  interface Slot extends AutoCloseable {
    @Override
    void close();
  }

  /**
   * Waits up to {@code wait} for a slot of {@code namespace} and one of the operator's.
   *
   * @param what the connection, in the message
   */
  Slot take(String namespace, Duration wait, String what) throws HBaseClusterException {
    Semaphore ns = byNamespace.computeIfAbsent(namespace, n -> new Semaphore(perNamespace, true));
    long by = System.nanoTime() + wait.toNanos();
    try {
      if (!ns.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS)) {
        throw busy(what, wait, perNamespace + " at a time for namespace " + namespace);
      }
      boolean got;
      try {
        got = inAll.tryAcquire(Math.max(0, by - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        ns.release();
        throw e;
      }
      if (!got) {
        ns.release();
        throw busy(what, wait, "the operator's calls, all its slots taken");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HBaseClusterException("interrupted waiting to call HBase (" + what + ")");
    }
    return () -> {
      inAll.release();
      ns.release();
    };
  }

  private static HBaseClusterException busy(String what, Duration wait, String whose) {
    return new HBaseClusterException(
        "no HBase call slot for "
            + what
            + " within "
            + wait.toSeconds()
            + " s ("
            + whose
            + "): other calls are taking long; tried again at the next reconcile");
  }
}
