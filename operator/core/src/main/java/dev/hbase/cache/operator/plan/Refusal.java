package dev.hbase.cache.operator.plan;

import java.util.List;

/** The policy cannot be applied; each reason says what is wrong and what is allowed. */
public record Refusal(List<String> reasons) implements PlanResult {
  public Refusal {
    reasons = List.copyOf(reasons);
  }

  public String summary() {
    return String.join("; ", reasons);
  }
}
