package dev.hbase.cache.e2e;

import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The kind suite's one cluster fixture: every scenario class ({@link KindScenario}) runs on the
 * same cluster, with the same reader, report and summary, the {@link Suite} kept in the root {@link
 * ExtensionContext.Store}: set up before the first scenario class, closed once after the last (the
 * report's summary and step times are written then).
 *
 * <p>The scenario classes are one story: each starts from the state the one before it left (the
 * policy's writerThreads, which policy exists, which operator is installed). They run in the order
 * of {@link #SCENARIOS} (class {@code @Order} 1-10, junit-platform.properties orders classes by
 * it), their steps by their {@code @Order}, which is the step's place in the whole suite (1-21).
 * Both are checked here as the run goes: a scenario class or a step that begins out of that order
 * fails at once, and every step after it is skipped. Each class's start is printed ({@code [e2e]
 * === scenario class i/10}).
 */
final class KindSuite implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
  /** The scenario classes in run order: the i-th has {@code @Order(i + 1)}. */
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

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(KindSuite.class);

  /** The run's one suite (created, not yet set up, by the first caller). */
  static Suite suite(ExtensionContext context) {
    return context
        .getRoot()
        .getStore(NAMESPACE)
        .getOrComputeIfAbsent(Suite.class, k -> new Suite(), Suite.class);
  }

  /**
   * A scenario class's place in the run: its index in {@link #SCENARIOS} + 1, which its
   * {@code @Order} must say.
   */
  static int scenarioOrder(Class<?> c) {
    int i = SCENARIOS.indexOf(c);
    Order order = c.getAnnotation(Order.class);
    if (i < 0 || order == null || order.value() != i + 1) {
      throw new IllegalStateException(
          c.getSimpleName()
              + " is not the scenario class of @Order("
              + (order == null ? "none" : order.value())
              + ") in KindSuite.SCENARIOS "
              + SCENARIOS.stream().map(Class::getSimpleName).toList());
    }
    return i + 1;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    Suite suite = suite(context);
    Class<?> c = context.getRequiredTestClass();
    int order;
    try {
      order = scenarioOrder(c);
      if (order <= suite.lastScenarioOrder) {
        throw new IllegalStateException(
            String.format(
                "scenario class %s (%d of %d) began after %s (%d): the classes ran out of order"
                    + " (junit.jupiter.testclass.order.default in junit-platform.properties?)",
                c.getSimpleName(),
                order,
                SCENARIOS.size(),
                suite.lastScenario,
                suite.lastScenarioOrder));
      }
    } catch (IllegalStateException e) {
      suite.failed = true; // the story's state is not what the next steps start from: skip them
      throw e;
    }
    suite.lastScenarioOrder = order;
    suite.lastScenario = c.getSimpleName();
    System.out.printf(
        "%n[e2e] === scenario class %d/%d: %s%n", order, SCENARIOS.size(), c.getSimpleName());
    suite.setUpOnce();
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    Suite suite = suite(context);
    Method m = context.getRequiredTestMethod();
    Order order = m.getAnnotation(Order.class);
    String name = m.getDeclaringClass().getSimpleName() + "." + m.getName();
    if (order == null || order.value() <= suite.lastStepOrder) {
      suite.failed = true;
      throw new IllegalStateException(
          String.format(
              "step %s (@Order %s) began after %s (@Order %d): the steps ran out of order",
              name, order == null ? "none" : order.value(), suite.lastStep, suite.lastStepOrder));
    }
    suite.lastStepOrder = order.value();
    suite.lastStep = name;
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == Suite.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return suite(context);
  }
}
