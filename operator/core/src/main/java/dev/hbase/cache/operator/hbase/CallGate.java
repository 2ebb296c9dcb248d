package dev.hbase.cache.operator.hbase;

import java.io.IOException;

/**
 * Where a call that runs outside the connection's own thread waits for a call slot: the background
 * warm moves' check of the live servers ({@link WarmMoves}), whose answer can be as large as any.
 * The connection cache gives each connection its namespace's ({@code connection.CallSlots}).
 */
@FunctionalInterface
public interface CallGate {
  /** A slot held until {@link Held#close}; throws when none is free within its wait. */
  Held enter() throws IOException;

  /** A slot held. */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }

  /** No gate: every call goes at once. */
  CallGate OPEN = () -> () -> {};
}
