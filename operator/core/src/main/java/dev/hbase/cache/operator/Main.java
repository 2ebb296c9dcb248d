package dev.hbase.cache.operator;

import dev.hbase.cache.operator.cli.PlanCommand;
import java.util.Arrays;
import java.util.List;

/** {@code java -jar hbase-cache-operator.jar [run | plan ...]}. */
public final class Main {
  private Main() {}

  public static void main(String[] argv) throws Exception {
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
