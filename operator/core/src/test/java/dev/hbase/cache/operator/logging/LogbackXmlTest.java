package dev.hbase.cache.operator.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.util.ContextInitializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.javaoperatorsdk.operator.processing.MDCUtils;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logback.xml the jar ships, loaded by logback's own configurator with the start-up settings
 * (LOG_FORMAT, LOG_LEVEL, LOG_ROOT_LEVEL) as the environment would give them: what a line of a
 * reconcile looks like in either format, and which lines each level lets through.
 */
class LogbackXmlTest {
  static final ObjectMapper JSON = new ObjectMapper();

  /** A logger of the operator's own (dev.hbase.cache) and one of a library's. */
  final Logger own = LoggerFactory.getLogger("dev.hbase.cache.operator.logging.Probe");

  final Logger library = LoggerFactory.getLogger("io.javaoperatorsdk.operator.Probe");

  final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

  @AfterEach
  void restore() throws Exception {
    context.reset();
    new ContextInitializer(context).autoConfig(); // as the test JVM started
  }

  /**
   * The stderr lines of {@code logging} under logback.xml with these settings (a setting given as
   * "" is unset), only those of the probe loggers.
   */
  List<String> lines(Map<String, String> settings, Consumer<Logger> logging) throws Exception {
    context.reset();
    for (String key : List.of("LOG_FORMAT", "LOG_LEVEL", "LOG_ROOT_LEVEL")) {
      // over the system properties the test JVM pins (a context property is looked up first)
      context.putProperty(key, settings.getOrDefault(key, ""));
    }
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(getClass().getResource("/logback.xml"));

    PrintStream err = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setErr(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      logging.accept(own);
    } finally {
      System.setErr(err);
    }
    List<String> lines = new ArrayList<>();
    boolean probe = false;
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      // a line starts with its time or is a JSON object; a stack trace's lines follow their line;
      // lines of other threads (other tests' leftovers) are not the probes'
      if (line.startsWith("{") || line.matches("^\\d{4}-\\d\\d-\\d\\dT.*")) {
        probe = line.contains(".Probe");
      }
      if (probe) {
        lines.add(line);
      }
    }
    return lines;
  }

  static BlockCachePolicy policy() {
    BlockCachePolicy p = new BlockCachePolicy();
    p.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace("shop")
            .withName("hot-cache")
            .withUid("u-1")
            .withGeneration(3L)
            .build());
    return p;
  }

  /** Logs as a reconcile: inside the MDC scope JOSDK sets around it (its own MDCUtils). */
  static void inReconcile(Runnable r) {
    MDCUtils.addResourceInfo(policy());
    try {
      r.run();
    } finally {
      MDCUtils.removeResourceInfo();
    }
  }

  @Test
  void jsonLinesAreOneObjectEachWithThePolicyOfTheReconcileAndTheStackTrace() throws Exception {
    List<String> lines =
        lines(
            Map.of("LOG_FORMAT", "json"),
            log -> {
              inReconcile(
                  () ->
                      log.warn(
                          "policy {}: drain failed",
                          "hot-cache",
                          new IllegalStateException("master gone")));
              log.info("starting");
            });

    assertThat(lines).hasSize(2);
    JsonNode reconcile = JSON.readTree(lines.get(0));
    assertThat(reconcile.path("level").asText()).isEqualTo("WARN");
    assertThat(reconcile.path("loggerName").asText())
        .isEqualTo("dev.hbase.cache.operator.logging.Probe");
    assertThat(reconcile.path("threadName").asText()).isEqualTo(Thread.currentThread().getName());
    assertThat(reconcile.path("formattedMessage").asText())
        .isEqualTo("policy hot-cache: drain failed");
    assertThat(reconcile.path("timestamp").asLong())
        .isCloseTo(System.currentTimeMillis(), org.assertj.core.data.Offset.offset(60_000L));
    assertThat(reconcile.path("mdc").path("resource.namespace").asText()).isEqualTo("shop");
    assertThat(reconcile.path("mdc").path("resource.name").asText()).isEqualTo("hot-cache");
    JsonNode thrown = reconcile.path("throwable");
    assertThat(thrown.path("className").asText()).isEqualTo("java.lang.IllegalStateException");
    assertThat(thrown.path("message").asText()).isEqualTo("master gone");
    assertThat(thrown.path("stepArray").size()).isPositive();
    assertThat(thrown.path("stepArray").get(0).path("className").asText())
        .startsWith(LogbackXmlTest.class.getName());

    JsonNode outside = JSON.readTree(lines.get(1));
    assertThat(outside.path("formattedMessage").asText()).isEqualTo("starting");
    assertThat(outside.path("mdc").has("resource.name"))
        .as("no policy outside a reconcile")
        .isFalse();
    assertThat(outside.path("throwable").isNull()).isTrue();
  }

  @Test
  void textLinesCarryTimeThreadLevelLoggerAndThePolicyOfTheReconcile() throws Exception {
    String thread = Thread.currentThread().getName();
    List<String> lines =
        lines(
            Map.of(),
            log -> {
              inReconcile(() -> log.warn("drain failed", new IllegalStateException("master gone")));
              log.info("starting");
            });

    assertThat(lines.get(0))
        .matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z \\["
                + thread
                + "] WARN  dev\\.hbase\\.cache\\.operator\\.logging\\.Probe \\[shop/hot-cache]"
                + " - drain failed");
    assertThat(lines.get(1)).isEqualTo("java.lang.IllegalStateException: master gone");
    assertThat(lines.get(2)).startsWith("\tat " + LogbackXmlTest.class.getName());
    assertThat(lines.get(lines.size() - 1))
        .matches(
            "\\S+Z \\["
                + thread
                + "] INFO  dev\\.hbase\\.cache\\.operator\\.logging\\.Probe - starting")
        .as("no [/] outside a reconcile")
        .doesNotContain("[/]");
  }

  @Test
  void aLineBreakInATextMessageCannotForgeALine() throws Exception {
    List<String> lines =
        lines(
            Map.of(),
            log ->
                log.warn(
                    "table {} not found",
                    "t\n2026-01-01T00:00:00.000Z [main] INFO  dev.hbase.cache.Forged - ok\r\nx"));
    assertThat(lines)
        .as("one line, its breaks turned into spaces")
        .hasSize(1)
        .first()
        .asString()
        .endsWith(
            " - table t 2026-01-01T00:00:00.000Z [main] INFO  dev.hbase.cache.Forged - ok x not"
                + " found");
  }

  @Test
  void theKubernetesClientsHttpHeadersAreNeverLoggedEvenAtTrace() throws Exception {
    lines(Map.of("LOG_ROOT_LEVEL", "trace"), log -> log.info("x"));
    assertThat(
            context
                .getLogger("io.fabric8.kubernetes.client.http.HttpLoggingInterceptor")
                .isTraceEnabled())
        .as("the HTTP logger writes the bearer token's header at trace")
        .isFalse();
    assertThat(context.getLogger("io.fabric8.kubernetes.client.Config").isTraceEnabled())
        .as("other libraries do follow LOG_ROOT_LEVEL=trace")
        .isTrue();
  }

  /** Which of a debug, info and warn line of each logger come out. */
  List<String> levelsShown(Map<String, String> settings) throws Exception {
    List<String> lines =
        lines(
            settings,
            log -> {
              for (Logger l : List.of(log, library)) {
                l.debug("debug");
                l.info("info");
                l.warn("warn");
              }
            });
    return lines.stream()
        .map(
            l ->
                (l.contains("io.javaoperatorsdk") ? "library " : "own ")
                    + l.replaceAll(".* - ", ""))
        .toList();
  }

  @Test
  void logLevelSetsTheOperatorsOwnLevelTheOthersStayAtWarn() throws Exception {
    assertThat(levelsShown(Map.of()))
        .as("defaults")
        .containsExactly("own info", "own warn", "library warn");
    assertThat(levelsShown(Map.of("LOG_LEVEL", "debug")))
        .containsExactly("own debug", "own info", "own warn", "library warn");
    assertThat(levelsShown(Map.of("LOG_LEVEL", "WARN")))
        .containsExactly("own warn", "library warn");
    assertThat(levelsShown(Map.of("LOG_ROOT_LEVEL", "info")))
        .containsExactly("own info", "own warn", "library info", "library warn");
  }

  /**
   * A mistyped level is info, not logback's DEBUG default for words it does not know; a mistyped
   * format is text, not an appender that does not exist (no line at all).
   */
  @Test
  void aMistypedSettingFallsBackToItsDefault() throws Exception {
    Choice.mistakes();
    assertThat(levelsShown(Map.of("LOG_LEVEL", "verbose", "LOG_ROOT_LEVEL", "loud")))
        .containsExactly("own info", "own warn", "library warn");
    assertThat(Choice.mistakes())
        .as("what Main logs as warnings once logging is up")
        .containsExactly(
            "LOG_LEVEL=verbose is none of trace, debug, info, warn, error, off: info is used",
            "LOG_ROOT_LEVEL=loud is none of trace, debug, info, warn, error, off: warn is used");
    assertThat(lines(Map.of("LOG_FORMAT", "xml"), log -> log.info("starting")))
        .singleElement()
        .asString()
        .endsWith("Probe - starting");
    assertThat(lines(Map.of("LOG_FORMAT", " JSON "), log -> log.info("starting")))
        .singleElement()
        .asString()
        .startsWith("{");
  }
}
