package dev.hbase.cache.hbaseit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One HBase daemon started through images/hbase/entrypoint.sh, as the image starts it. Wrapped in
 * coreutils {@code timeout} so that it cannot outlive a test JVM killed hard; {@code timeout}
 * passes SIGTERM on to the JVM, so {@link #stop} is a graceful stop.
 */
final class HBaseProcess {

  /** Upper bound on any daemon's life, in seconds. */
  static final int MAX_LIFE_SECONDS = 1800;

  private static final Set<HBaseProcess> RUNNING = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> RUNNING.forEach(HBaseProcess::kill)));
  }

  final String name;
  final Path log;
  private final Process process;

  private HBaseProcess(String name, Path log, Process process) {
    this.name = name;
    this.log = log;
    this.process = process;
  }

  static HBaseProcess start(
      String name, String role, Path confDir, Map<String, String> env, Path log, List<String> args)
      throws IOException {
    List<String> command = new ArrayList<>();
    command.addAll(
        List.of(
            "timeout",
            "-k",
            "20",
            Integer.toString(MAX_LIFE_SECONDS),
            "bash",
            LocalHBase.ENTRYPOINT.toString(),
            role));
    command.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.environment().put("HBASE_LIB_DIR", LocalHBase.LIB_DIR.toString());
    pb.environment().put("HBASE_CONF_DIR", confDir.toString());
    pb.environment().put("HBASE_LOG_DIR", log.getParent().toString());
    pb.environment().putAll(env);
    // -Dhbase.it.jvmOpts: JVM options for every daemon of the run (entrypoint.sh's HBASE_OPTS);
    // make test-hbase passes C1-only JIT there (see the Makefile), the benchmarks pass nothing
    String jvmOpts = System.getProperty("hbase.it.jvmOpts", "").strip();
    if (!jvmOpts.isEmpty()) {
      pb.environment().merge("HBASE_OPTS", jvmOpts, (before, more) -> before + " " + more);
    }
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    HBaseProcess p = new HBaseProcess(name, log, pb.start());
    RUNNING.add(p);
    return p;
  }

  boolean alive() {
    return process.isAlive();
  }

  /** SIGTERM (graceful: HBase's shutdown hook runs), then SIGKILL after the grace period. */
  int stop(long graceSeconds) {
    process.destroy();
    try {
      if (!process.waitFor(graceSeconds, TimeUnit.SECONDS)) {
        kill();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      kill();
    }
    RUNNING.remove(this);
    return process.isAlive() ? -1 : process.exitValue();
  }

  /** SIGTERM without waiting (for stopping several at once). */
  void signalStop() {
    process.destroy();
  }

  void kill() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
  }

  @Override
  public String toString() {
    return name + "(pid " + process.pid() + ", log " + log + ")";
  }
}
