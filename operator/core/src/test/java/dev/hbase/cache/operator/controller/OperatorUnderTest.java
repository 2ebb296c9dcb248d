package dev.hbase.cache.operator.controller;

import dev.hbase.cache.operator.BlockCacheOperator;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The operator a benchmark point measures: in the benchmark's JVM (its requests counted, its
 * threads profiled), or in a process of its own started from the operator's jar ({@link
 * BridgedOperator}), whose memory is the operator's alone.
 */
interface OperatorUnderTest extends AutoCloseable {
  /** The operator's Prometheus metrics, as /metrics serves them. */
  String metrics();

  /** Whether it runs in a process of its own. */
  boolean ownProcess();

  /** Its process's CPU time so far, ns. */
  long cpuNanos();

  /** Its process id. */
  long pid();

  @Override
  void close();

  static OperatorUnderTest inThisJvm(BlockCacheOperator op) {
    op.start();
    return new OperatorUnderTest() {
      @Override
      public String metrics() {
        return op.registry().scrape();
      }

      @Override
      public boolean ownProcess() {
        return false;
      }

      @Override
      public long pid() {
        return ProcessHandle.current().pid();
      }

      @Override
      public long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
      }

      @Override
      public void close() {
        op.stop();
      }
    };
  }

  /**
   * {@link BridgedOperator} from the operator's runnable jar (and this module's test classes, for
   * the bridge), with the given JVM options; its output goes to {@code log}.
   */
  static OperatorUnderTest process(
      String kubeConfigYaml, String bridgeUrl, List<String> jvm, Path log)
      throws IOException, InterruptedException {
    Path jar = Path.of("../target/hbase-cache-operator.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " missing: the package phase builds it");
    }
    Files.createDirectories(log.getParent());
    Path kubeconfig = log.resolveSibling("operator-process.kubeconfig");
    Files.writeString(kubeconfig, kubeConfigYaml);
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvm);
    cmd.addAll(
        List.of(
            "-cp",
            jar.toAbsolutePath() + ":" + Path.of("target/test-classes").toAbsolutePath(),
            BridgedOperator.class.getName(),
            bridgeUrl,
            Integer.toString(port)));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.environment().put("KUBECONFIG", kubeconfig.toAbsolutePath().toString());
    Process p = pb.start();
    Instant deadline = Instant.now().plusSeconds(60);
    while (!Files.readString(log).contains("BRIDGED OPERATOR STARTED")) {
      if (!p.isAlive() || Instant.now().isAfter(deadline)) {
        p.destroyForcibly();
        throw new IllegalStateException("the operator process did not start: see " + log);
      }
      Thread.sleep(200);
    }
    return process(p, port);
  }

  private static OperatorUnderTest process(Process p, int port) {
    HttpClient http = HttpClient.newHttpClient();
    return new OperatorUnderTest() {
      @Override
      public String metrics() {
        try {
          return http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                      .timeout(Duration.ofSeconds(30))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
        } catch (IOException e) {
          throw new IllegalStateException(e);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }

      @Override
      public boolean ownProcess() {
        return true;
      }

      @Override
      public long pid() {
        return p.pid();
      }

      @Override
      public long cpuNanos() {
        return Proc.cpuNanos(p.pid());
      }

      @Override
      public void close() {
        try (OutputStream in = p.getOutputStream()) {
          in.close(); // BridgedOperator stops when its standard input closes
        } catch (IOException e) {
          // gone already
        }
        try {
          if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          p.destroyForcibly();
        }
      }
    };
  }

  /** Another JVM's memory and CPU, from /proc and jcmd. */
  final class Proc {
    private Proc() {}

    static long statusKiB(long pid, String field) {
      try {
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
          if (l.startsWith(field + ":")) {
            return Long.parseLong(l.replaceAll("\\D", ""));
          }
        }
      } catch (IOException e) {
        // gone
      }
      return 0;
    }

    static long cpuNanos(long pid) {
      try {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L; // 100 ticks/s
      } catch (IOException | RuntimeException e) {
        return 0;
      }
    }

    static String jcmd(long pid, String... command) throws IOException, InterruptedException {
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
      cmd.add(Long.toString(pid));
      cmd.addAll(List.of(command));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      p.waitFor(60, TimeUnit.SECONDS);
      return out;
    }

    /** Native Memory Tracking's committed MiB by category ({@code VM.native_memory summary}). */
    static Map<String, Long> nativeMemoryMiB(long pid) throws IOException, InterruptedException {
      return OperatorScaleBench.parseNativeMemory(jcmd(pid, "VM.native_memory", "summary"));
    }

    /**
     * The heap in use after a full collection, MiB: {@code GC.run}, then {@code GC.heap_info}'s
     * used figures of every generation (Serial: def new and tenured).
     */
    static long heapAfterGcMiB(long pid) throws IOException, InterruptedException {
      jcmd(pid, "GC.run");
      Thread.sleep(1000);
      String info = jcmd(pid, "GC.heap_info");
      Matcher m =
          Pattern.compile("(?m)^\\s*(?:def new|tenured) generation\\s+total \\d+K, used (\\d+)K")
              .matcher(info);
      long kib = 0;
      boolean any = false;
      while (m.find()) {
        kib += Long.parseLong(m.group(1));
        any = true;
      }
      if (!any) {
        throw new IllegalStateException("no heap figures in GC.heap_info: " + info);
      }
      return kib >> 10;
    }

    static Map<String, Object> memory(long pid) throws IOException, InterruptedException {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("heapAfterGcMiB", heapAfterGcMiB(pid));
      m.put("rssMiB", statusKiB(pid, "VmRSS") >> 10);
      m.put("peakRssMiB", statusKiB(pid, "VmHWM") >> 10);
      // the RSS's anonymous memory (heap, metaspace, code, stacks, malloc) and file pages (the
      // JVM's own libraries and the mapped class data)
      m.put("rssAnonMiB", statusKiB(pid, "RssAnon") >> 10);
      m.put("rssFileMiB", statusKiB(pid, "RssFile") >> 10);
      m.put("threads", statusKiB(pid, "Threads"));
      m.put("nativeMemoryCommittedMiB", nativeMemoryMiB(pid));
      return m;
    }
  }
}
