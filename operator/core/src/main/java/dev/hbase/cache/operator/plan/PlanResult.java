package dev.hbase.cache.operator.plan;

/** What the planner answers: a {@link Plan}, or a {@link Refusal} that explains itself. */
public sealed interface PlanResult permits Plan, Refusal {}
