package dev.hbase.cache.operator.controller;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Standard-shape conditions; lastTransitionTime moves only when the status flips. A reason is an
 * enum constant, written as its name ({@link Reason}, {@link Observation.Why}, the roller's).
 */
public final class Conditions {
  public static final String VALID = "Valid";
  public static final String READY = "Ready";
  public static final String PROGRESSING = "Progressing";
  public static final String DEGRADED = "Degraded";
  public static final String CACHE_RESET_PENDING = "CacheResetPending";
  public static final String BALANCED = "Balanced";

  /** On a deleted policy only: HBase not given back yet, the finalizer kept (ReleaseStep). */
  public static final String GIVE_BACK_PENDING = "GiveBackPending";

  private Conditions() {}

  public static void set(
      List<Condition> conditions,
      String type,
      boolean status,
      Enum<?> reason,
      String message,
      Long generation,
      Instant now) {
    String s = status ? "True" : "False";
    Optional<Condition> old = find(conditions, type);
    String since =
        old.filter(c -> s.equals(c.getStatus()))
            .map(Condition::getLastTransitionTime)
            .orElse(now.toString());
    Condition c =
        new ConditionBuilder()
            .withType(type)
            .withStatus(s)
            .withReason(reason.name())
            .withMessage(message == null ? "" : message)
            .withObservedGeneration(generation)
            .withLastTransitionTime(since)
            .build();
    conditions.removeIf(x -> type.equals(x.getType()));
    conditions.add(c);
    conditions.sort(java.util.Comparator.comparing(Condition::getType));
  }

  public static Optional<Condition> find(List<Condition> conditions, String type) {
    return conditions == null
        ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  public static boolean isTrue(List<Condition> conditions, String type) {
    return find(conditions, type).map(c -> "True".equals(c.getStatus())).orElse(false);
  }
}
