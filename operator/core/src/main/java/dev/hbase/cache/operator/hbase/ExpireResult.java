package dev.hbase.cache.operator.hbase;

/**
 * What one {@link HBaseCluster#expire} call found and did.
 *
 * @param server the instance asked for
 * @param outcome what happened
 * @param procedure the master's ServerCrashProcedure id when {@link Outcome#EXPIRED} (-1 when the
 *     master had one already), else -1
 * @param detail what the check found, in words (the endpoint's answer, say)
 */
public record ExpireResult(ServerId server, Outcome outcome, long procedure, String detail) {

  public enum Outcome {
    /** Expired: the master processes it as dead now (or already did: {@code procedure} -1). */
    EXPIRED,
    /**
     * Nothing sent: the master no longer lists that exact instance live (expired already, or a new
     * instance registered at its host and port and the master expired the old one itself).
     */
    NOT_LIVE,
    /** Refused: the instance answers at its endpoint as itself. It is alive: never expired. */
    ALIVE,
    /**
     * Refused: nothing proves it gone (its endpoint accepts connections but does not answer in
     * time, say: a frozen process). Its ZooKeeper session decides.
     */
    UNPROVEN
  }

  /** Whether the expiry was refused by the check (the server alive, or not proven gone). */
  public boolean refused() {
    return outcome == Outcome.ALIVE || outcome == Outcome.UNPROVEN;
  }

  @Override
  public String toString() {
    return "expiry of "
        + server
        + ": "
        + outcome
        + (procedure >= 0 ? " (ServerCrashProcedure " + procedure + ")" : "")
        + (detail == null ? "" : ", " + detail);
  }
}
