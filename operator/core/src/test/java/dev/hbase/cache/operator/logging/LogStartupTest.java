package dev.hbase.cache.operator.logging;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.MDCUtils;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logging as the operator starts it: a fresh JVM on the test classpath (the logging backend and its
 * configuration file as the jar has them) with LOG_FORMAT / LOG_LEVEL in its environment, which
 * logs through SLF4J only, inside the MDC scope JOSDK opens around a reconcile.
 */
class LogStartupTest {
  static final ObjectMapper JSON = new ObjectMapper();

  /** The child JVM: a reconcile's lines, then one outside a reconcile. */
  public static final class Child {
    public static void main(String[] args) {
      Logger log = LoggerFactory.getLogger("dev.hbase.cache.operator.controller.RollStep");
      BlockCachePolicy p = new BlockCachePolicy();
      p.setMetadata(new ObjectMetaBuilder().withNamespace("shop").withName("hot-cache").build());
      MDCUtils.addResourceInfo(p);
      try {
        log.debug("deciding");
        log.info("drained rs-0");
        log.warn("drain failed", new IllegalStateException("master gone"));
      } finally {
        MDCUtils.removeResourceInfo();
      }
      log.info("idle");
    }
  }

  /** The child's stderr lines, run with these variables (and no other LOG_*). */
  static List<String> run(Map<String, String> env) throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder pb =
        new ProcessBuilder(
            java.toString(), "-cp", System.getProperty("java.class.path"), Child.class.getName());
    pb.environment().keySet().removeIf(k -> k.startsWith("LOG_"));
    pb.environment().putAll(env);
    pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
    Process child = pb.start();
    String err = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(child.exitValue()).as(err).isZero();
    return new ArrayList<>(err.lines().toList());
  }

  @Test
  void jsonAtDebugIsOneObjectPerLineWithThePolicyOfTheReconcile() throws Exception {
    List<String> lines = run(Map.of("LOG_FORMAT", "json", "LOG_LEVEL", "debug"));
    List<JsonNode> objects = new ArrayList<>();
    for (String line : lines) {
      objects.add(JSON.readTree(line)); // every line, the stack trace's too, is one object
    }
    assertThat(objects)
        .extracting(o -> o.path("level").asText() + " " + o.path("formattedMessage").asText())
        .containsExactly("DEBUG deciding", "INFO drained rs-0", "WARN drain failed", "INFO idle");
    for (JsonNode o : objects.subList(0, 3)) {
      assertThat(o.path("loggerName").asText())
          .isEqualTo("dev.hbase.cache.operator.controller.RollStep");
      assertThat(o.path("threadName").asText()).isEqualTo("main");
      assertThat(o.path("mdc").path("resource.namespace").asText()).isEqualTo("shop");
      assertThat(o.path("mdc").path("resource.name").asText()).isEqualTo("hot-cache");
    }
    assertThat(objects.get(2).path("throwable").path("message").asText()).isEqualTo("master gone");
    assertThat(objects.get(3).path("mdc").has("resource.name")).isFalse();
  }

  @Test
  void textByDefaultNamesThePolicyOfTheReconcileAndLeavesDebugOut() throws Exception {
    List<String> lines = run(Map.of());
    assertThat(lines.get(0))
        .matches(
            "\\S+Z \\[main] INFO  dev\\.hbase\\.cache\\.operator\\.controller\\.RollStep"
                + " \\[shop/hot-cache] - drained rs-0");
    assertThat(lines.get(1)).endsWith(" [shop/hot-cache] - drain failed");
    assertThat(lines.get(2)).isEqualTo("java.lang.IllegalStateException: master gone");
    assertThat(lines.get(lines.size() - 1)).endsWith("RollStep - idle");
    assertThat(lines).noneMatch(l -> l.contains("deciding"));
  }
}
