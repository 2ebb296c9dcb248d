package dev.hbase.cache.e2e;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * One scenario class's result in a run: its preconditions (held, established, or not established),
 * its steps passed, failed and skipped, and its wall time. A failed step skips the rest of its own
 * class only ({@link KindScenario#step}); the report's table of every class ({@link #table}) is
 * written at the run's end ({@link Suite#close}).
 */
final class ScenarioOutcome {
  final String name;
  final List<String> tags;
  final Instant start;
  Instant end;

  /** One line per precondition: "held", "established in N s", or why it was not. */
  final List<String> preconditions = new ArrayList<>();

  long preconditionSeconds;

  /** The precondition that could not be established, and why; null when all were. */
  String notEstablished;

  /** The first step that failed, and its message's first line; null while none did. */
  String failedStep;

  String failure;
  int passed;
  int failed;
  int skipped;

  ScenarioOutcome(String name, List<String> tags, Instant start) {
    this.name = name;
    this.tags = List.copyOf(tags);
    this.start = start;
  }

  /** Its later steps are skipped: a step failed, or a precondition was not established. */
  boolean stopped() {
    return failedStep != null || notEstablished != null;
  }

  void stepFailed(String step, Throwable t) {
    failed++;
    if (failedStep == null) {
      failedStep = step;
      failure = firstLine(t);
    }
  }

  /** A step that passed, then failed the check after it (FaultScenario's cluster given back). */
  void failedAfter(String check, Throwable t) {
    passed--;
    stepFailed(check, t);
  }

  String result() {
    if (notEstablished != null) {
      return "PRECONDITION NOT ESTABLISHED: " + notEstablished;
    }
    if (failedStep != null) {
      return "FAILED at " + failedStep + ": " + failure;
    }
    return end == null ? "did not finish" : "passed";
  }

  String row() {
    return String.format(
        "| %s | %s | %s | %s | %d / %d / %d | %s |",
        name,
        tags.isEmpty() ? "-" : String.join(", ", tags),
        preconditions.isEmpty()
            ? "none"
            : String.join("; ", preconditions) + " (" + preconditionSeconds + " s)",
        cell(result()),
        passed,
        failed,
        skipped,
        end == null ? "-" : Duration.between(start, end).toSeconds() + " s");
  }

  /**
   * The report's table of the run's scenario classes, in run order: each one that began, with its
   * result; the others of {@code scenarios} as not selected (by the tags or -Dtest).
   */
  static List<String> table(
      List<String> scenarios, Map<String, ScenarioOutcome> began, String tags) {
    List<String> out = new ArrayList<>();
    out.add(
        "Tags selected: "
            + tags
            + ". Each class starts from what its preconditions check (and establish when they do not"
            + " hold); a failed step skips the rest of its own class only.");
    out.add("");
    out.add(
        "| scenario class | tags | preconditions | result | steps passed / failed / skipped | wall time |");
    out.add("|---|---|---|---|---:|---:|");
    for (String name : scenarios) {
      ScenarioOutcome o = began.get(name);
      out.add(o == null ? "| " + name + " | | | not selected | | |" : o.row());
    }
    began.keySet().stream()
        .filter(n -> !scenarios.contains(n))
        .forEach(n -> out.add(began.get(n).row()));
    long red = began.values().stream().filter(ScenarioOutcome::stopped).count();
    out.add("");
    out.add(
        String.format(
            "%d of %d classes ran; %d passed, %d did not%s.",
            began.size(),
            scenarios.size(),
            began.size() - red,
            red,
            red == 0
                ? ""
                : " ("
                    + began.values().stream()
                        .filter(ScenarioOutcome::stopped)
                        .map(o -> o.name)
                        .collect(Collectors.joining(", "))
                    + ")"));
    return out;
  }

  /**
   * A tag expression as surefire's -Dgroups gave it (unset: blank, or Maven's literal "${groups}").
   */
  static String tagsSelected(String groups) {
    return groups == null || groups.isBlank() || groups.startsWith("${")
        ? "all (no tag expression)"
        : "`" + groups + "`";
  }

  static String firstLine(Throwable t) {
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    String first = m.strip().lines().findFirst().orElse("");
    return first.length() > 200 ? first.substring(0, 200) + "..." : first;
  }

  private static String cell(String s) {
    return s.replace("|", "/").replace("\n", " ");
  }
}
