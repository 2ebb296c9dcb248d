package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Step 17 (tag {@code observability}): the host's Prometheus answers every query of the chart's
 * Grafana dashboard from the run; the suite's cluster-wide operator's own memory after its steps
 * (1-17; step 18 replaces it).
 */
@Tag("observability")
class ObservabilityScenarios extends KindScenario {
  /**
   * Its start: the suite's operator (its dashboard ConfigMap, its memory), the reader (the
   * dashboard's read panels), the host's Prometheus following its chart through at least one roll.
   */
  @Override
  List<Need> needs() {
    return List.of(Needs.HBASE_UP, Needs.SUITE_OPERATOR, Needs.READER, Needs.PROMETHEUS_SAW_A_ROLL);
  }

  @Test
  @Order(1)
  void prometheusAnswersEveryDashboardQueryFromTheRun() {
    step(
        "17. Prometheus scraped the operator and the RegionServers: every query of the chart's Grafana dashboard has series",
        () -> {
          report.line(
              "- Prometheus (Debian's 2.x, on the host) since %s, through the API server's proxy, scraping and evaluating what the "
                  + "chart's ServiceMonitor, PodMonitor and PrometheusRule in the cluster say (step 1)",
              prometheus.started);
          prometheus.targets().forEach(t -> report.line("  - target %s", t));
          // the dashboard the chart installed for Grafana's sidecar
          ConfigMap dashboard =
              client
                  .configMaps()
                  .inNamespace(cluster.opNs)
                  .withLabel("grafana_dashboard", "1")
                  .list()
                  .getItems()
                  .stream()
                  .filter(
                      cm -> cm.getData() != null && cm.getData().containsKey("hbase-cache.json"))
                  .findFirst()
                  .orElse(null);
          assertThat(dashboard)
              .as("the chart's dashboard ConfigMap (label grafana_dashboard=1) in %s", cluster.opNs)
              .isNotNull();
          assertThat(dashboard.getData().get("hbase-cache.json"))
              .as("the dashboard it carries")
              .isEqualTo(
                  Files.readString(
                          repo.resolve("charts/hbase-cache-operator/dashboards/hbase-cache.json"))
                      .strip());
          report.line(
              "- dashboard ConfigMap `%s` (grafana_dashboard=1) carries charts/hbase-cache-operator/dashboards/hbase-cache.json",
              dashboard.getMetadata().getName());
          // every alerting rule of the chart's PrometheusRule evaluated without an error over the
          // run
          List<String> rules = prometheus.rules();
          rules.forEach(r -> report.line("  - rule %s", r));
          assertThat(rules)
              .as("rules loaded from the chart's PrometheusRule")
              .hasSizeGreaterThanOrEqualTo(4);
          assertThat(rules)
              .as("rule health (group/name health error)")
              .allMatch(r -> r.split(" ")[1].equals("ok"));
          List<Map<String, Object>> saved = new ArrayList<>();
          List<String> empty = new ArrayList<>();
          for (Prometheus.Query q :
              Prometheus.dashboardQueries(dashboard.getData().get("hbase-cache.json"))) {
            var result = prometheus.range(q.expr(), prometheus.started, Duration.ofSeconds(15));
            report.line("- %s: `%s`: %d series", q.panel(), q.expr(), result.size());
            if (result.isEmpty()) {
              empty.add(q.panel() + ": " + q.expr());
            }
            saved.add(
                Map.of(
                    "panel", q.panel(), "expr", q.expr(), "legend", q.legend(), "result", result));
          }
          Files.writeString(
              target.resolve("prometheus-panels.json"),
              new com.fasterxml.jackson.databind.ObjectMapper()
                  .writerWithDefaultPrettyPrinter()
                  .writeValueAsString(saved));
          report.line(
              "- every panel's series saved to e2e/target/prometheus-panels.json (`make dashboard-plot` draws them)");
          assertThat(empty).as("dashboard queries without a series over the run").isEmpty();
          summary.add(
              String.format(
                  "Prometheus: all %d queries of the chart's dashboard answered with series from the run",
                  saved.size()));
          // the cluster-wide operator's own memory after its steps (make bench-operator measures it
          // at 200
          // servers
          // without the HBase client's classes: this is the production process, HBase client
          // loaded)
          Pod op = cluster.operatorPod();
          String status =
              cluster
                  .kubectl(
                      "exec",
                      "-n",
                      cluster.opNs,
                      op.getMetadata().getName(),
                      "--",
                      "cat",
                      "/proc/1/status")
                  .output();
          String metrics =
              cluster
                  .kubectl(
                      "get",
                      "--raw",
                      "/api/v1/namespaces/"
                          + cluster.opNs
                          + "/pods/"
                          + op.getMetadata().getName()
                          + ":8080/proxy/metrics")
                  .output();
          long rss = procKiB(status, "VmRSS") >> 10;
          long peak = procKiB(status, "VmHWM") >> 10;
          double metaspace =
              metrics
                      .lines()
                      .filter(
                          l ->
                              l.startsWith("jvm_memory_used_bytes{")
                                  && l.contains("id=\"Metaspace\""))
                      .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                      .sum()
                  / (1 << 20);
          report.line(
              "- operator pod %s after steps 1-16: RSS %d MiB, peak RSS %d MiB, metaspace %.0f MiB (chart limit 512Mi)",
              op.getMetadata().getName(), rss, peak, metaspace);
          assertThat(peak)
              .as("the operator's peak RSS (MiB) against the chart's 512Mi limit")
              .isBetween(1L, 511L);
          assertThat(metaspace).as("the operator's metaspace from its /metrics (MiB)").isPositive();
        });
  }

  /** A field of /proc/PID/status in KiB (VmRSS, VmHWM); 0 when absent. */
  static long procKiB(String status, String field) {
    return status
        .lines()
        .filter(l -> l.startsWith(field + ":"))
        .findFirst()
        .map(l -> Long.parseLong(l.replaceAll("\\D", "")))
        .orElse(0L);
  }
}
