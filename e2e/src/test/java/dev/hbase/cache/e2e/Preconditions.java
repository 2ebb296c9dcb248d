package dev.hbase.cache.e2e;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A scenario class's preconditions at its start ({@link KindScenario#needs()}), in their order:
 * each checked; one that does not hold established, then checked again. The report gets a section
 * per class saying which held and which were established, in how long; the step table a row for
 * them. One that cannot be established ends the class there: {@link #establish} throws, JUnit marks
 * the class failed (the run is red), no step of it runs, and the next class begins as usual. A need
 * that could not be established is remembered ({@link Suite#unestablished}) and not tried again for
 * a later class.
 */
final class Preconditions {
  private final Suite suite;
  private final KindScenario scenario;
  private final ScenarioOutcome outcome;

  Preconditions(Suite suite, KindScenario scenario, ScenarioOutcome outcome) {
    this.suite = suite;
    this.scenario = scenario;
    this.outcome = outcome;
  }

  /** Thrown when a precondition cannot be established: the class does not run. */
  static final class NotEstablished extends RuntimeException {
    NotEstablished(String message, Throwable cause) {
      super(message, cause);
    }
  }

  void establish(List<Need> needs) {
    if (needs.isEmpty()) {
      return;
    }
    Instant t0 = Instant.now();
    List<String> established = new ArrayList<>();
    List<String> held = new ArrayList<>();
    String section =
        String.format(
            "%s (scenario class, tags %s): preconditions",
            outcome.name, outcome.tags.isEmpty() ? "none" : String.join(", ", outcome.tags));
    suite.report.section(section);
    try {
      for (Need n : needs) {
        String earlier = suite.unestablished.get(n.name());
        if (earlier != null) {
          throw new NotEstablished(
              n.name() + ": could not be established for an earlier class (" + earlier + ")", null);
        }
        Instant n0 = Instant.now();
        String why = check(n);
        if (why == null) {
          held.add(n.name());
          outcome.preconditions.add(n.name() + ": held");
          continue;
        }
        suite.report.line("- %s: does not hold (%s); establishing it", n.name(), why);
        String still;
        try {
          n.establish(scenario);
          still = check(n);
        } catch (Throwable t) {
          still = ScenarioOutcome.firstLine(t);
          remember(n, still);
          throw new NotEstablished(n.name() + ": " + still, t);
        }
        if (still != null) {
          remember(n, still);
          throw new NotEstablished(n.name() + ": still does not hold: " + still, null);
        }
        long secs = Duration.between(n0, Instant.now()).toSeconds();
        established.add(n.name() + " (" + secs + " s)");
        outcome.preconditions.add(n.name() + ": established in " + secs + " s");
        suite.report.line("- %s: established in %d s (it did not hold: %s)", n.name(), secs, why);
      }
    } catch (NotEstablished e) {
      outcome.notEstablished = e.getMessage();
      outcome.preconditions.add("NOT ESTABLISHED: " + e.getMessage());
      finish(t0, held, established, "NOT ESTABLISHED");
      scenario.diagnostics();
      throw e;
    }
    finish(t0, held, established, established.isEmpty() ? "held" : "established");
  }

  private String check(Need n) {
    try {
      return n.unmet(scenario);
    } catch (Throwable t) {
      return "its check failed: " + ScenarioOutcome.firstLine(t);
    }
  }

  private void remember(Need n, String why) {
    suite.unestablished.put(n.name(), outcome.name + ": " + why);
  }

  private void finish(Instant t0, List<String> held, List<String> established, String result) {
    outcome.preconditionSeconds = Duration.between(t0, Instant.now()).toSeconds();
    suite.report.line(
        "- %s in %d s; held: %s; established: %s%s",
        result,
        outcome.preconditionSeconds,
        held.isEmpty() ? "none" : String.join(", ", held),
        established.isEmpty() ? "none" : String.join(", ", established),
        outcome.notEstablished == null ? "" : "; not established: " + outcome.notEstablished);
    suite.stepTimes.add(
        String.format(
            "| (%s: preconditions) | %d s | %s | %s | %s |",
            outcome.name,
            outcome.preconditionSeconds,
            scenario.readerOver(t0),
            result,
            suite.beside.since(t0)));
  }
}
