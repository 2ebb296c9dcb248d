package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * How {@link ReconcileSampler} names the place a reconciler thread is at (bench-operator's table).
 */
class ReconcileSamplerTest {

  static StackTraceElement frame(String cls, String method) {
    return new StackTraceElement(cls, method, null, -1);
  }

  @Test
  void aThreadWaitingForTheApiServerIsNamedByTheOperatorsCallAndTheLibraryCallItMade() {
    StackTraceElement[] stack = {
      frame("jdk.internal.misc.Unsafe", "park"),
      frame("java.util.concurrent.CompletableFuture", "get"),
      frame("io.fabric8.kubernetes.client.dsl.internal.OperationSupport", "waitForResult"),
      frame("io.fabric8.kubernetes.client.dsl.internal.BaseOperation", "create"),
      frame("dev.hbase.cache.operator.controller.Events", "record"),
      frame("dev.hbase.cache.operator.controller.RollStep", "roll"),
      frame("dev.hbase.cache.operator.controller.BlockCachePolicyReconciler", "reconcile"),
      frame("io.javaoperatorsdk.operator.processing.Controller", "reconcile")
    };
    assertThat(ReconcileSampler.where(stack))
        .isEqualTo("Events.record -> BaseOperation.create [Unsafe.park]");
  }

  @Test
  void theOperatorsOwnCodeOnTopAndAThreadOutsideTheReconcilerAreToldApart() {
    assertThat(
            ReconcileSampler.where(
                new StackTraceElement[] {
                  frame("dev.hbase.cache.operator.roll.Roller", "step"),
                  frame("dev.hbase.cache.operator.controller.RollStep", "roll")
                }))
        .isEqualTo("Roller.step (own code)");
    assertThat(
            ReconcileSampler.where(
                new StackTraceElement[] {
                  frame("jdk.internal.misc.Unsafe", "park"),
                  frame("java.util.concurrent.ThreadPoolExecutor", "getTask")
                }))
        .as("an idle executor thread")
        .isNull();
  }
}
