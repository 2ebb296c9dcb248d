package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The scenario classes stand alone, without a cluster: scenario classes of this test's own run
 * through JUnit as the kind suite's do ({@link KindSuite}, {@link KindScenario#step}, {@link
 * Preconditions}), on a {@link Suite} that reads no cluster ({@link KindSuite#OFFLINE}). A failed
 * step skips the rest of its own class and no other; a class whose precondition cannot be
 * established runs no step, is reported so, and the next class runs; a precondition that does not
 * hold is established before the first step; the report's class table says each class's result and
 * the tags selected; the tags select classes.
 */
@Order(0)
class ScenarioIsolationTest {
  @TempDir Path dir;

  /** Its second step fails. */
  @Tag("first")
  static class FailsItsSecondStep extends KindScenario {
    @Test
    @Order(1)
    void passes() {
      step("a1. passes", () -> {});
    }

    @Test
    @Order(2)
    void fails() {
      step(
          "a2. fails",
          () -> {
            throw new AssertionError("a2 broke");
          });
    }

    @Test
    @Order(3)
    void isSkipped() {
      step("a3. after the failure", () -> {});
    }
  }

  /** Runs after the failed class. */
  @Tag("second")
  static class RunsAfterIt extends KindScenario {
    @Test
    @Order(1)
    void runs() {
      step("b1. runs", () -> {});
    }
  }

  /** Needs what cannot be had. */
  @Tag("third")
  static class NeedsWhatCannotBeEstablished extends KindScenario {
    @Override
    List<Need> needs() {
      return List.of(
          Need.of(
              "a thing",
              s -> "there is none",
              s -> {
                throw new IllegalStateException("it cannot be made");
              }));
    }

    @Test
    @Order(1)
    void neverRuns() {
      step("c1. never runs", () -> {});
    }
  }

  /** Needs what does not hold at first and can be made: it counts how often it was made. */
  @Tag("fourth")
  static class NeedsWhatCanBeEstablished extends KindScenario {
    static final AtomicInteger MADE = new AtomicInteger();

    @Override
    List<Need> needs() {
      return List.of(
          Need.of(
              "another thing",
              s -> MADE.get() > 0 ? null : "not made yet",
              s -> MADE.incrementAndGet()));
    }

    @Test
    @Order(1)
    void runsOnWhatWasMade() {
      step(
          "d1. runs on what was made",
          () -> assertThat(MADE.get()).as("made before the first step").isEqualTo(1));
    }
  }

  /** Each step's and each class's result of a run of {@code classes}, in this order. */
  Map<String, String> run(String tags, Class<?>... classes) {
    Map<String, String> results = new LinkedHashMap<>();
    var request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(Arrays.stream(classes).map(DiscoverySelectors::selectClass).toList())
            .configurationParameter(KindSuite.OFFLINE, dir.toString())
            .configurationParameter(
                KindSuite.SCENARIO_LIST,
                Arrays.stream(classes).map(Class::getName).collect(Collectors.joining(",")));
    if (tags != null) {
      request.filters(TagFilter.includeTags(tags));
      request.configurationParameter(KindSuite.GROUPS, tags);
    }
    LauncherFactory.create()
        .execute(
            request.build(),
            new TestExecutionListener() {
              @Override
              public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                String name = name(id);
                if (name != null) {
                  results.put(
                      name,
                      result.getStatus()
                          + result.getThrowable().map(t -> ": " + t.getMessage()).orElse(""));
                }
              }
            });
    return results;
  }

  private static String name(TestIdentifier id) {
    Object source = id.getSource().orElse(null);
    if (source instanceof MethodSource m) {
      return m.getJavaClass().getSimpleName() + "." + m.getMethodName();
    }
    if (source instanceof ClassSource c) {
      return c.getJavaClass().getSimpleName();
    }
    return null;
  }

  String report() throws Exception {
    return Files.readString(dir.resolve("e2e-report.md"));
  }

  @Test
  void aFailedStepSkipsTheRestOfItsOwnClassAndNoOtherClass() throws Exception {
    Map<String, String> r = run(null, FailsItsSecondStep.class, RunsAfterIt.class);
    assertThat(r)
        .containsEntry("FailsItsSecondStep.passes", "SUCCESSFUL")
        .containsEntry("FailsItsSecondStep.fails", "FAILED: a2 broke")
        .hasEntrySatisfying(
            "FailsItsSecondStep.isSkipped",
            v ->
                assertThat(v)
                    .startsWith("ABORTED")
                    .contains("step a2 of FailsItsSecondStep failed"))
        .containsEntry("RunsAfterIt.runs", "SUCCESSFUL");
    assertThat(report())
        .contains(
            "| FailsItsSecondStep | first | none | FAILED at step a2: a2 broke | 1 / 1 / 1 |",
            "| RunsAfterIt | second | none | passed | 1 / 0 / 0 |",
            "2 of 2 classes ran; 1 passed, 1 did not (FailsItsSecondStep).")
        .contains("| a3. after the failure | 0 s | - | skipped (step a2 failed) | |");
  }

  @Test
  void aClassWhosePreconditionCannotBeEstablishedRunsNoStepAndTheNextClassRuns() throws Exception {
    Map<String, String> r = run(null, NeedsWhatCannotBeEstablished.class, RunsAfterIt.class);
    assertThat(r)
        .doesNotContainKey("NeedsWhatCannotBeEstablished.neverRuns")
        .hasEntrySatisfying(
            "NeedsWhatCannotBeEstablished",
            v -> assertThat(v).startsWith("FAILED").contains("a thing: it cannot be made"))
        .containsEntry("RunsAfterIt.runs", "SUCCESSFUL");
    assertThat(report())
        .contains(
            "| NeedsWhatCannotBeEstablished | third | NOT ESTABLISHED: a thing: it cannot be made",
            "| PRECONDITION NOT ESTABLISHED: a thing: it cannot be made | 0 / 0 / 0 |",
            "- a thing: does not hold (there is none); establishing it",
            "| RunsAfterIt | second | none | passed |");
  }

  @Test
  void aPreconditionThatDoesNotHoldIsEstablishedBeforeTheFirstStepAndThenHolds() throws Exception {
    NeedsWhatCanBeEstablished.MADE.set(0);
    Map<String, String> r = run(null, NeedsWhatCanBeEstablished.class);
    assertThat(r).containsEntry("NeedsWhatCanBeEstablished.runsOnWhatWasMade", "SUCCESSFUL");
    assertThat(NeedsWhatCanBeEstablished.MADE).hasValue(1);
    assertThat(report())
        .contains("- another thing: established in 0 s (it did not hold: not made yet)")
        .contains("| NeedsWhatCanBeEstablished | fourth | another thing: established in 0 s");
  }

  @Test
  void theTagsSelectTheClassesAndTheReportSaysWhichTagsRanAndWhatWasNotSelected() throws Exception {
    Map<String, String> r =
        run(
            "second|fourth",
            FailsItsSecondStep.class,
            RunsAfterIt.class,
            NeedsWhatCanBeEstablished.class);
    assertThat(r.keySet())
        .doesNotContain("FailsItsSecondStep", "FailsItsSecondStep.passes")
        .contains("RunsAfterIt.runs", "NeedsWhatCanBeEstablished.runsOnWhatWasMade");
    assertThat(report())
        .contains("Tags selected: `second|fourth`.")
        .contains("| FailsItsSecondStep | | | not selected | | |")
        .contains("2 of 3 classes ran; 2 passed, 0 did not.");
  }

  @Test
  void withoutAnExpressionTheReportSaysAllTagsRan() {
    assertThat(ScenarioOutcome.tagsSelected("${groups}")).isEqualTo("all (no tag expression)");
    assertThat(ScenarioOutcome.tagsSelected("")).isEqualTo("all (no tag expression)");
    assertThat(ScenarioOutcome.tagsSelected("setup|fault")).isEqualTo("`setup|fault`");
  }
}
