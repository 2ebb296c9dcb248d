package dev.hbase.cache.operator.controller;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The watches' first lists, a few at a time for all the operator's {@link NamedWatches}: hundreds
 * start together when the operator starts (a few per policy), and that many lists at once on a busy
 * API server timed out (seen: 10 s request timeouts with 50 policies on a loaded machine). A start
 * holds its place until its first list is in, fails once (it is retried without one), or its watch
 * stops.
 */
final class WatchStarts {
  private final int max;
  private int running;
  private final ArrayDeque<Runnable> waiting = new ArrayDeque<>();

  WatchStarts(int max) {
    this.max = max;
  }

  /**
   * Runs {@code start} now or once a place is free; it calls the runnable it is given when done.
   */
  void submit(Consumer<Runnable> start) {
    AtomicBoolean released = new AtomicBoolean();
    Runnable go =
        () ->
            start.accept(
                () -> {
                  if (released.compareAndSet(false, true)) {
                    next();
                  }
                });
    synchronized (this) {
      if (running >= max) {
        waiting.add(go);
        return;
      }
      running++;
    }
    go.run();
  }

  private void next() {
    Runnable go;
    synchronized (this) {
      go = waiting.poll();
      if (go == null) {
        running--;
        return;
      }
    }
    go.run();
  }
}
