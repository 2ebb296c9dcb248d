package dev.hbase.cache.operator.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** A pool thread runs a carried task in the handing thread's MDC, and only that task. */
class LogContextTest {
  final ExecutorService one = Executors.newSingleThreadExecutor();

  @AfterEach
  void close() {
    one.shutdownNow();
    MDC.clear();
  }

  @Test
  void theTaskSeesTheContextItWasHandedWithAndThePoolThreadKeepsNone() throws Exception {
    one.submit(() -> MDC.put("left", "over")).get(); // what the pool thread had before
    MDC.put("resource.namespace", "shop");
    MDC.put("resource.name", "hot-cache");
    Runnable carried =
        LogContext.carry(
            () -> {
              assertThat(MDC.getCopyOfContextMap())
                  .containsExactlyInAnyOrderEntriesOf(
                      Map.of("resource.namespace", "shop", "resource.name", "hot-cache"));
            });
    MDC.put("resource.name", "changed-after"); // taken when wrapped, not when run
    one.submit(carried).get();
    assertThat(one.submit(MDC::getCopyOfContextMap).get())
        .as("the pool thread's own context after the task")
        .containsExactly(Map.entry("left", "over"));

    MDC.clear();
    Map<String, String> none =
        CompletableFuture.supplyAsync(LogContext.carry(MDC::getCopyOfContextMap), one).get();
    assertThat(none == null ? Map.of() : none).as("handed outside a reconcile").isEmpty();
  }
}
