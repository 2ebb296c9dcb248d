package dev.hbase.cache.e2e;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The kind suite's one cluster fixture: every scenario class ({@link KindScenario}) runs on the
 * same cluster (one HBase, one reader, one report), the {@link Suite} kept in the root {@link
 * ExtensionContext.Store}: set up before the first scenario class, closed once after the last (the
 * report's class table, summary and step times are written then).
 *
 * <p>Each scenario class stands alone: before its first step, its preconditions ({@link
 * KindScenario#needs()}) are checked and, where they do not hold, established (an operator
 * reinstalled, the suite's policy put back, the reader started, caches warmed); a class whose
 * preconditions cannot be established fails at once, reported as such, and no step of it runs. A
 * failed step skips the rest of its own class, never another class. The classes run in the order of
 * {@link #SCENARIOS} ({@link ClassOrder}, named in junit-platform.properties), so that the
 * preconditions are cheap: the class before leaves most of them in place. Their steps run by their
 * {@code @Order} (1, 2, ... within the class). Each class's start is printed ({@code [e2e] ===
 * scenario class i/n}).
 *
 * <p>Adding a scenario class: write it (extends {@link KindScenario}, or {@link FaultScenario} for
 * fault steps), give it a tag of its own ({@code @Tag} on the class) and its {@link
 * KindScenario#needs()}, and add it to {@link #SCENARIOS} where it should run and its steps to
 * {@code ScenarioOrderTest.RUN_ORDER}. e2e/kind/README.md says more.
 */
final class KindSuite implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
  /** The scenario classes in run order. */
  static final List<Class<? extends KindScenario>> SCENARIOS =
      List.of(
          SetupScenarios.class,
          RollScenarios.class,
          DrainScenarios.class,
          DisruptionScenarios.class,
          WarmStopScenarios.class,
          PolicyRefusalScenarios.class,
          PolicyLifecycleScenarios.class,
          ObservabilityScenarios.class,
          NamespaceInstallScenario.class,
          AdviceScenarios.class);

  /**
   * Configuration parameter: a directory for a run without a cluster (ScenarioIsolationTest): the
   * report goes there and nothing connects to a cluster.
   */
  static final String OFFLINE = "e2e.offline";

  /**
   * Configuration parameter: the scenario classes in run order, comma-separated class names, in
   * place of {@link #SCENARIOS} (ScenarioIsolationTest's own classes).
   */
  static final String SCENARIO_LIST = "e2e.scenarios";

  /** Configuration parameter (a system property from e2e/pom.xml): surefire's -Dgroups. */
  static final String GROUPS = "e2e.groups";

  /**
   * Configuration parameter (or env E2E_BREAK_PRECONDITION, which e2e.sh passes on): the simple
   * name of a scenario class given a precondition that cannot be established, to show on a cluster
   * that the next class still runs and the run is red. Never set in .ci/run.
   */
  static final String BREAK_PRECONDITION = "e2e.break-precondition";

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(KindSuite.class);

  /** The run's one suite (created, not yet set up, by the first caller). */
  static Suite suite(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(
            Suite.class,
            k ->
                new Suite(
                    scenarios(context::getConfigurationParameter),
                    context.getConfigurationParameter(OFFLINE).map(Path::of).orElse(null),
                    ScenarioOutcome.tagsSelected(
                        context.getConfigurationParameter(GROUPS).orElse(null))),
            Suite.class);
  }

  /** {@link #SCENARIOS}, or the classes {@link #SCENARIO_LIST} names. */
  static List<Class<?>> scenarios(Function<String, Optional<String>> config) {
    return config
        .apply(SCENARIO_LIST)
        .map(
            names ->
                Arrays.stream(names.split(","))
                    .map(String::strip)
                    .<Class<?>>map(KindSuite::load)
                    .toList())
        .orElse(List.copyOf(SCENARIOS));
  }

  private static Class<?> load(String name) {
    try {
      return Class.forName(name);
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(SCENARIO_LIST + ": no class " + name, e);
    }
  }

  /**
   * The class order of the run (junit-platform.properties): the scenario classes by their place in
   * {@link #scenarios}; every other class (the checks without a cluster, *Test) before them.
   */
  public static final class ClassOrder implements ClassOrderer {
    @Override
    public void orderClasses(ClassOrdererContext context) {
      List<Class<?>> order = scenarios(context::getConfigurationParameter);
      context
          .getClassDescriptors()
          .sort(Comparator.comparingInt((ClassDescriptor d) -> order.indexOf(d.getTestClass())));
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    Suite suite = suite(context);
    Class<?> c = context.getRequiredTestClass();
    KindScenario scenario = (KindScenario) context.getRequiredTestInstance();
    int place = suite.scenarios.indexOf(c) + 1;
    ScenarioOutcome outcome = suite.begin(c.getSimpleName(), tags(context));
    scenario.outcome = outcome;
    if (!suite.offline()) {
      System.out.printf(
          "%n[e2e] === scenario class %d/%d: %s (tags: %s)%n",
          place, suite.scenarios.size(), c.getSimpleName(), String.join(", ", outcome.tags));
    }
    try {
      if (place == 0) {
        throw new IllegalStateException(
            c.getSimpleName()
                + " is not in KindSuite.SCENARIOS "
                + suite.scenarios.stream().map(Class::getSimpleName).toList()
                + ": add it there, where it should run");
      }
      if (place <= suite.lastScenarioPlace) {
        throw new IllegalStateException(
            String.format(
                "scenario class %s (%d of %d) began after %s (%d): the classes ran out of order"
                    + " (junit.jupiter.testclass.order.default in junit-platform.properties?)",
                c.getSimpleName(),
                place,
                suite.scenarios.size(),
                suite.lastScenario,
                suite.lastScenarioPlace));
      }
      suite.lastScenarioPlace = place;
      suite.lastScenario = c.getSimpleName();
      suite.lastStepOrder = 0;
      suite.setUpOnce();
      scenario.attach(suite);
    } catch (Throwable t) {
      outcome.notEstablished = "the suite's fixture: " + ScenarioOutcome.firstLine(t);
      outcome.end = Instant.now();
      throw t;
    }
    List<Need> needs = new java.util.ArrayList<>(scenario.needs());
    if (c.getSimpleName()
        .equals(
            context
                .getConfigurationParameter(BREAK_PRECONDITION)
                .orElse(System.getenv("E2E_BREAK_PRECONDITION")))) {
      needs.add(0, Needs.broken(BREAK_PRECONDITION));
    }
    new Preconditions(suite, scenario, outcome).establish(needs);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    Suite suite = suite(context);
    ScenarioOutcome o = suite.outcomes.get(context.getRequiredTestClass().getSimpleName());
    if (o != null && o.end == null) {
      o.end = Instant.now();
    }
    if (o != null && !suite.offline()) {
      System.out.printf(
          "[e2e] === %s: %s after %d s%n",
          o.name, o.result(), Duration.between(o.start, o.end).toSeconds());
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    Suite suite = suite(context);
    Method m = context.getRequiredTestMethod();
    Order order = m.getAnnotation(Order.class);
    String name = m.getDeclaringClass().getSimpleName() + "." + m.getName();
    if (order == null || order.value() <= suite.lastStepOrder) {
      ScenarioOutcome o = suite.outcomes.get(context.getRequiredTestClass().getSimpleName());
      IllegalStateException e =
          new IllegalStateException(
              String.format(
                  "step %s (@Order %s) began after %s (@Order %d): the steps ran out of order",
                  name,
                  order == null ? "none" : order.value(),
                  suite.lastStep,
                  suite.lastStepOrder));
      if (o != null) {
        o.stepFailed(name, e); // the class's story is not what its next steps start from
      }
      throw e;
    }
    suite.lastStepOrder = order.value();
    suite.lastStep = name;
  }

  /** The class's tags, sorted (its own {@code @Tag}s and those it inherits). */
  private static List<String> tags(ExtensionContext context) {
    return context.getTags().stream().sorted().toList();
  }
}
