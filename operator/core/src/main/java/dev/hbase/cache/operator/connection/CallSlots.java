package dev.hbase.cache.operator.connection;

import dev.hbase.cache.operator.hbase.HBaseClusterException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How many HBase calls run at once: at most {@code perNamespace} of one namespace's connections,
 * and {@code inAll} in the operator. Each call's answer may take up to a sixteenth of the heap once
 * parsed ({@code RpcAnswerCap}), and HBase converts it before the call returns; a connection runs
 * its calls one at a time ({@link BoundedCluster}), but a tenant can make 8 connections (one per
 * quorum its policies name), so without this one namespace's answers could take half the heap at
 * once. With the defaults (2 per namespace, 6 in all) the answers in flight take at most some 6/16
 * of the heap, and one tenant holds at most 2 of the 6 slots. A slot is waited for a bounded time;
 * then the call fails, saying why, and the connection stays as it is.
 *
 * <p>A slot that comes free goes to the waiting namespace that holds the fewest of the operator's
 * slots, the first come among equals: namespaces whose calls hang (a server that accepts and never
 * answers holds a call to its deadline) take every slot between them only while nobody else waits;
 * a namespace that holds none gets the next one that ends. (Three such namespaces can still hold
 * all six until their calls end: the bound is the call deadline.)
 */
final class CallSlots {
  private final int perNamespace;
  private final int inAll;
  private final Map<String, Semaphore> byNamespace = new ConcurrentHashMap<>();

  /** Under {@link #lock}: the operator's slots each namespace holds, and those waiting. */
  private final Map<String, Integer> held = new HashMap<>();

  private final Deque<Waiter> waiting = new ArrayDeque<>();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private int taken;

  /** One waiting caller (by identity: one namespace may have several). */
  private static final class Waiter {
    final String namespace;

    Waiter(String namespace) {
      this.namespace = namespace;
    }
  }

  CallSlots(int perNamespace, int inAll) {
    this.perNamespace = perNamespace;
    this.inAll = inAll;
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
        got = takeShared(namespace, by);
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
      giveShared(namespace);
      ns.release();
    };
  }

  /** One of the operator's slots, by {@code by} (nanoTime): whether it was had. */
  private boolean takeShared(String namespace, long by) throws InterruptedException {
    Waiter me = new Waiter(namespace);
    lock.lock();
    try {
      waiting.addLast(me);
      try {
        while (taken >= inAll || next() != me) {
          long left = by - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          changed.awaitNanos(left);
        }
        taken++;
        held.merge(namespace, 1, Integer::sum);
        return true;
      } finally {
        waiting.remove(me);
        changed.signalAll(); // the next one may be another now
      }
    } finally {
      lock.unlock();
    }
  }

  /** The waiter whose namespace holds the fewest slots, the first come among equals. */
  private Waiter next() {
    Waiter best = null;
    int fewest = Integer.MAX_VALUE;
    for (Waiter w : waiting) {
      int h = held.getOrDefault(w.namespace, 0);
      if (h < fewest) {
        best = w;
        fewest = h;
      }
    }
    return best;
  }

  private void giveShared(String namespace) {
    lock.lock();
    try {
      taken--;
      held.computeIfPresent(namespace, (n, h) -> h > 1 ? h - 1 : null);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** For tests: how many of the operator's slots are waited for now. */
  int waiting() {
    lock.lock();
    try {
      return waiting.size();
    } finally {
      lock.unlock();
    }
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
