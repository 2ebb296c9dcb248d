package dev.hbase.cache.operator;

import dev.hbase.cache.operator.cli.PlanCommand;
import dev.hbase.cache.operator.logging.Choice;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code java -jar hbase-cache-operator.jar [run | plan ...]}. */
public final class Main {
  private Main() {}

  public static void main(String[] argv) throws Exception {
    // logging starts here (logback.xml); a mistyped LOG_FORMAT/LOG_LEVEL is said in its format
    Logger log = LoggerFactory.getLogger(Main.class);
    Choice.mistakes().forEach(log::warn);
    // an exception no code catches (a failed start) is a log line too, not the JVM's own stack
    // trace print that would break LOG_FORMAT=json's one object per line
    Thread.setDefaultUncaughtExceptionHandler(
        (thread, e) -> log.error("uncaught exception in thread {}", thread.getName(), e));
    List<String> args = Arrays.asList(argv);
    String command = args.isEmpty() ? "run" : args.get(0);
    switch (command) {
      case "plan" ->
          System.exit(PlanCommand.run(args.subList(1, args.size()), System.out, System.err));
      case "run" -> BlockCacheOperator.main(args.isEmpty() ? args : args.subList(1, args.size()));
      case "-h", "--help", "help" -> {
        System.out.println("usage: hbase-cache-operator [run]   run the operator (default)");
        System.out.println(
            "       hbase-cache-operator plan -f POLICY.yaml --memory-limit 16Gi [--memory-request Q]");
      }
      default -> {
        System.err.println("unknown command " + command + ": use run or plan");
        System.exit(PlanCommand.USAGE);
      }
    }
  }
}
