package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.discovery.ClassNameFilter;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The kind suite's run order and its tag selections, without a cluster: JUnit's own discovery of
 * the scenario classes (what surefire runs, ordered by {@link KindSuite.ClassOrder} and the steps'
 * {@code @Order}s) must list the suite's 23 steps in their order (step 10c since issue 50's paused
 * roll; 10b since issue 28's container restart; 22 until the operator-killed step joined step 9;
 * the sizing advice, step 17 until then, runs last since issue 26's CI time); each class's own tag
 * must select that class alone (make e2e E2E_TAGS=stops), the group tag {@code fault} the fault
 * classes, and the make targets' selections exactly the steps they ran before. Nothing here starts
 * {@link KindSuite}: discovery does not run a class. Ordered first, before the scenario classes.
 */
@Order(0)
class ScenarioOrderTest {
  /** The suite's steps in run order, as "Class.method", with the step number the report shows. */
  static final List<String> RUN_ORDER =
      List.of(
          "SetupScenarios.crdAndOperatorChartInstall", // 1 (setup)
          "SetupScenarios.persistentFilePolicyPutsThePlannedCacheInEveryRegionServer", // 2 (setup)
          "SetupScenarios.statusShowsHitRatiosThatMatchTheWorkload", // 3 (setup)
          "SetupScenarios.specChangeRollsOneAtATimeWithTheCacheKept", // 4 (setup)
          "RollScenarios.helmUpgradeOfTheHBaseChartRollsThroughTheOperator", // 6
          "RollScenarios.helmUpgradeWhileARollRunsEndsWithEveryPodOnTheNewestTemplate", // 7
          "RollScenarios.theHMasterDeletedMidRollHoldsTheRollUntilItIsBack", // 8
          "RollScenarios.aPolicyMadeInvalidMidRollHoldsTheRollAndItResumesWhenValid", // 9
          "DrainScenarios.aRegionServerNotReadyButServingIsDrainedAndAnEvictionMidRollIsRefused", // 9b
          "DrainScenarios.aDrainWithNowhereToGoTimesOutAndGivesTheClusterBack", // 9c
          "DisruptionScenarios.aRegionServerKilledWhileAnotherDrainsHoldsTheRollUntilItIsBack", // 10
          "DisruptionScenarios.aRegionServerRestartedInItsPodGetsItsCachedRegionsBack", // 10b
          "DisruptionScenarios.aPodNotRolledYetOomKilledWhileTheRollIsPausedComesBackOnItsOwnPlanWithItsCache", // 10c
          "WarmStopScenarios.aNodeDrainEvictsASecondRegionServerOnlyOnceTheFirstIsBack", // 11
          "WarmStopScenarios.aScaleDownMovesTheRemovedServersRegionsAndAScaleUpBringsThemBack", // 11b
          "PolicyRefusalScenarios.aSecondPolicyOnTheSameStatefulSetIsRefusedAndTouchesNothing", // 12
          "PolicyRefusalScenarios.aPolicyThatCannotBePlannedChangesNothing", // 13
          "PolicyRefusalScenarios.aPodThatCannotStartBlocksTheRollUntilTheSpecIsReverted", // 14
          "PolicyLifecycleScenarios.anIdleClusterSurvivesACacheResetAndARestartWithAnEmptyCache", // 15
          "PolicyLifecycleScenarios.thePolicyDeletedMidDrainWithTheMasterAwayIsKeptUntilHBaseIsGivenBack", // 16
          "ObservabilityScenarios.prometheusAnswersEveryDashboardQueryFromTheRun", // 17
          "NamespaceInstallScenario.aNamespaceAdminInstallsTheOperatorForTheirNamespaceOnly", // 18
          // 19: after the namespace install, which then takes over the PersistentFile pods step 16
          // left, caches and all (not the advice step's Lru pods)
          "AdviceScenarios.aWorkingSetThatOutgrowsTheLruGetsAnOffheapRecommendation");

  /**
   * The steps JUnit would run, in order, with surefire's -Dgroups as a tag expression (null: all).
   */
  static List<String> plan(String groups) {
    LauncherDiscoveryRequestBuilder request =
        LauncherDiscoveryRequestBuilder.request()
            .selectors(DiscoverySelectors.selectPackage(KindScenario.class.getPackageName()))
            .filters(
                // the suite's no-cluster checks (this class, L2SettledTest, the scenario classes
                // ScenarioIsolationTest runs without a cluster) are not steps
                ClassNameFilter.excludeClassNamePatterns(".*Test", ".*Test\\$.*"));
    if (groups != null) {
      request.filters(TagFilter.includeTags(groups));
    }
    LauncherDiscoveryRequest built = request.build();
    TestPlan plan = LauncherFactory.create().discover(built);
    List<String> steps = new ArrayList<>();
    plan.getRoots().forEach(root -> walk(plan, root, steps));
    return steps;
  }

  private static void walk(TestPlan plan, TestIdentifier id, List<String> steps) {
    if (id.isTest() && id.getSource().orElse(null) instanceof MethodSource m) {
      steps.add(m.getJavaClass().getSimpleName() + "." + m.getMethodName());
    }
    plan.getChildren(id).forEach(child -> walk(plan, child, steps));
  }

  /** The steps of RUN_ORDER in these classes, in run order. */
  static List<String> stepsOf(String... classes) {
    Set<String> names = Set.of(classes);
    return RUN_ORDER.stream().filter(s -> names.contains(s.substring(0, s.indexOf('.')))).toList();
  }

  static Set<String> tags(Class<?> c) {
    return Arrays.stream(c.getAnnotationsByType(Tag.class))
        .map(Tag::value)
        .collect(Collectors.toSet());
  }

  @Test
  void makeE2eRunsTheTwentyThreeStepsInTheirOrder() {
    List<String> steps = plan(null);
    System.out.println("[e2e] run order:");
    for (int i = 0; i < steps.size(); i++) {
      System.out.printf("[e2e]   %2d. %s%n", i + 1, steps.get(i));
    }
    assertThat(steps).containsExactlyElementsOf(RUN_ORDER);
  }

  @Test
  void makeE2eNamespaceRunsTheSetupStepsThenTheNamespaceInstall() {
    assertThat(plan("setup|namespace"))
        .containsExactlyElementsOf(
            Stream.concat(RUN_ORDER.subList(0, 4).stream(), Stream.of(RUN_ORDER.get(21))).toList());
  }

  @Test
  void makeE2eFaultsRunsTheSetupStepsThenTheFaultScenarios() {
    assertThat(plan("setup|fault")).containsExactlyElementsOf(RUN_ORDER.subList(0, 20));
  }

  @Test
  void makeE2eTagsStopsRunsTheWarmStopsAlone() {
    assertThat(plan("stops")).containsExactlyElementsOf(stepsOf("WarmStopScenarios"));
  }

  @Test
  void theFaultTagSelectsTheSixFaultClassesWithoutTheSetup() {
    assertThat(plan("fault")).containsExactlyElementsOf(RUN_ORDER.subList(4, 20));
  }

  @Test
  void tagsCombineIntoAGroupInRunOrder() {
    assertThat(plan("advice|rolls"))
        .containsExactlyElementsOf(stepsOf("RollScenarios", "AdviceScenarios"));
  }

  @Test
  void eachScenarioClassHasATagOfItsOwnThatSelectsItAlone() {
    for (Class<? extends KindScenario> c : KindSuite.SCENARIOS) {
      Set<String> others =
          KindSuite.SCENARIOS.stream()
              .filter(o -> o != c)
              .flatMap(o -> tags(o).stream())
              .collect(Collectors.toSet());
      List<String> own = tags(c).stream().filter(t -> !others.contains(t)).toList();
      assertThat(own)
          .as("the tags of %s no other scenario class has", c.getSimpleName())
          .hasSize(1);
      assertThat(plan(own.get(0)))
          .as("the steps tag %s selects", own.get(0))
          .containsExactlyElementsOf(stepsOf(c.getSimpleName()));
    }
  }

  @Test
  void eachClassIsInKindSuiteAndItsStepsAreOrderedWithinIt() throws Exception {
    assertThat(RUN_ORDER.stream().map(s -> s.substring(0, s.indexOf('.'))).distinct().toList())
        .containsExactlyElementsOf(KindSuite.SCENARIOS.stream().map(Class::getSimpleName).toList());
    String lastClass = null;
    int inClass = 0;
    for (String s : RUN_ORDER) {
      String[] step = s.split("\\.");
      inClass = step[0].equals(lastClass) ? inClass + 1 : 1;
      lastClass = step[0];
      Class<?> c = Class.forName(KindScenario.class.getPackageName() + "." + step[0]);
      Method m = c.getDeclaredMethod(step[1]);
      assertThat(m.getAnnotation(Order.class).value())
          .as("@Order of %s: its place in its class", s)
          .isEqualTo(inClass);
      assertThat(m.getAnnotation(Tag.class))
          .as("a tag on step %s (tags are the class's: they select whole classes)", s)
          .isNull();
    }
    for (Class<? extends KindScenario> c : KindSuite.SCENARIOS) {
      // the check after every fault step (FaultScenario's @AfterEach) runs where the fault steps
      // are
      if (tags(c).contains("fault")) {
        assertThat(FaultScenario.class)
            .as("the base of %s, which has fault steps", c.getSimpleName())
            .isAssignableFrom(c);
      }
    }
  }
}
