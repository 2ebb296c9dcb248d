package dev.hbase.cache.operator.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names the operator chart's Grafana dashboard and PrometheusRule query, so that tests
 * can check each against what really exports it: {@link PolicyMetricsTest} (the operator's
 * hbase_cache_* families), {@code controller.ObservabilityIT} (the framework's operator_sdk_* on a
 * live /metrics) and hbase-it's PrometheusEndpointIT (HBase's own names on a real RegionServer's
 * /prometheus).
 */
public final class ChartQueries {
  private ChartQueries() {}

  static final Path CHART = Path.of("../../charts/hbase-cache-operator");
  static final Path DASHBOARD = CHART.resolve("dashboards/hbase-cache.json");
  static final Path RULES = CHART.resolve("templates/prometheusrule.yaml");

  /** Every PromQL expression: the dashboard's "expr" values and the rules' expr blocks. */
  static Set<String> expressions() {
    Set<String> out = new TreeSet<>();
    Matcher m = Pattern.compile("\"expr\": \"((?:[^\"\\\\]|\\\\.)*)\"").matcher(read(DASHBOARD));
    while (m.find()) {
      out.add(m.group(1).replace("\\\"", "\""));
    }
    // a rule's expr: the line itself, or the indented block under "expr: |"
    String[] lines = read(RULES).split("\n");
    for (int i = 0; i < lines.length; i++) {
      String t = lines[i].trim();
      if (t.startsWith("expr: |")) {
        int indent = lines[i].indexOf("expr");
        StringBuilder b = new StringBuilder();
        for (i++; i < lines.length && lines[i].indexOf(lines[i].trim()) > indent; i++) {
          b.append(lines[i].trim()).append(' ');
        }
        i--;
        out.add(b.toString().trim());
      } else if (t.startsWith("expr: ")) {
        out.add(t.substring("expr: ".length()));
      }
    }
    return out;
  }

  /**
   * The metric names in the expressions: snake_case words outside label matchers that are not a
   * function call (histogram_quantile, label_values) and not a Helm value.
   */
  public static Set<String> metricNames() {
    Set<String> names = new TreeSet<>();
    for (String e : expressions()) {
      String outsideMatchers = e.replaceAll("\\{[^}]*\\}", " ");
      Matcher m =
          Pattern.compile("\\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\\b(\\s*\\()?")
              .matcher(outsideMatchers);
      while (m.find()) {
        if (m.group(2) == null) {
          names.add(m.group(1));
        }
      }
    }
    return names;
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
