package dev.hbase.cache.operator.controller;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real {@code kube-controller-manager} against kube-api-test's API server, running only the
 * controllers a test names (e.g. the StatefulSet controller: pods from the current revision, {@code
 * controller-revision-hash} labels, {@code status.updateRevision}). The binary sits next to
 * kube-api-test's ({@code make kube-api-test-binaries} puts it there); its log goes to {@code
 * target/kube-controller-manager-<pid>-<n>.log}: the test JVM's pid in the name, as failsafe runs
 * classes in parallel forks that each count from 1.
 */
final class ControllerManager implements AutoCloseable {
  private static int started;
  private final Process process;

  private ControllerManager(Process process) {
    this.process = process;
  }

  static Path binary() {
    String dir = System.getenv("KUBE_API_TEST_DIR");
    Path k8s =
        (dir == null ? Path.of(System.getProperty("user.home"), ".kubeapitest") : Path.of(dir))
            .resolve("k8s");
    try (Stream<Path> versions = Files.list(k8s)) {
      return versions
          .map(v -> v.resolve("kube-controller-manager"))
          .filter(Files::isExecutable)
          .findFirst()
          .orElseThrow(
              () ->
                  new IllegalStateException(
                      "no kube-controller-manager under "
                          + k8s
                          + ": run `make kube-api-test-binaries`"));
    } catch (IOException e) {
      throw new IllegalStateException("cannot list " + k8s, e);
    }
  }

  /** Starts the named controllers (e.g. {@code statefulset-controller}). */
  static synchronized ControllerManager start(String kubeConfigYaml, String... controllers)
      throws IOException {
    Path dir = Path.of("target");
    Files.createDirectories(dir);
    String name = "kube-controller-manager-" + ProcessHandle.current().pid() + "-" + ++started;
    Path kubeconfig = dir.resolve(name + ".kubeconfig");
    Files.writeString(kubeconfig, kubeConfigYaml);
    Path log = dir.resolve(name + ".log");
    Process p =
        new ProcessBuilder(
                List.of(
                    binary().toString(),
                    "--kubeconfig=" + kubeconfig.toAbsolutePath(),
                    "--controllers=" + String.join(",", controllers),
                    "--leader-elect=false",
                    "--use-service-account-credentials=false",
                    "--secure-port=0",
                    "--v=2"))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    return new ControllerManager(p);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
