package dev.hbase.cache.operator.logging;

import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.MDC;

/**
 * Carries the logging context (SLF4J's MDC) of the thread that hands work to a pool into the task,
 * so that a line a pool thread logs on behalf of one policy names that policy as the reconcile's
 * own lines do. JOSDK puts the policy into the MDC of its reconciler thread ({@code
 * resource.namespace}, {@code resource.name}, ...) for the length of a reconcile; the operator's
 * own pools (region moves, /jmx scrapes, event sends) run outside it.
 *
 * <p>The context is taken when the task is wrapped (on the handing thread) and restored on the pool
 * thread around the task only: a pool thread never keeps one policy's context for the next task.
 */
public final class LogContext {
  private LogContext() {}

  /** The task, run with the calling thread's logging context as it is now. */
  public static Runnable carry(Runnable task) {
    Map<String, String> context = MDC.getCopyOfContextMap();
    return () -> {
      Map<String, String> before = install(context);
      try {
        task.run();
      } finally {
        install(before);
      }
    };
  }

  /** The supplier, run with the calling thread's logging context as it is now. */
  public static <T> Supplier<T> carry(Supplier<T> task) {
    Map<String, String> context = MDC.getCopyOfContextMap();
    return () -> {
      Map<String, String> before = install(context);
      try {
        return task.get();
      } finally {
        install(before);
      }
    };
  }

  /** Sets this thread's context to {@code context} (none: cleared); returns the one it had. */
  private static Map<String, String> install(Map<String, String> context) {
    Map<String, String> before = MDC.getCopyOfContextMap();
    if (context == null || context.isEmpty()) {
      MDC.clear();
    } else {
      MDC.setContextMap(context);
    }
    return before;
  }
}
