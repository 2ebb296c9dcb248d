package dev.hbase.cache.hbaseit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The operator chart's PodMonitor scrapes the RegionServers' own {@code /prometheus} (HBase's info
 * port): every HBase metric its Grafana dashboard and alerts query is there on a real RegionServer
 * of the planned PersistentFile mode, under the name the chart uses. The operator's own names are
 * checked in core (PolicyMetricsTest, ObservabilityIT).
 */
class PrometheusEndpointIT {
  static final Path CHART = Path.of("../../charts/hbase-cache-operator");

  @Test
  void everyHBaseMetricTheChartQueriesIsServedByARegionServer() throws Exception {
    Set<String> wanted = new TreeSet<>();
    for (Path p :
        Set.of(
            CHART.resolve("dashboards/hbase-cache.json"),
            CHART.resolve("templates/prometheusrule.yaml"))) {
      Matcher m =
          Pattern.compile("\\b((?:server|jvm_metrics)_[a-z0-9_]+)\\b").matcher(Files.readString(p));
      while (m.find()) {
        wanted.add(m.group(1));
      }
    }
    assertThat(wanted).contains("server_read_request_count", "server_block_cache_data_hit_count");

    try (LocalHBase hbase = LocalHBase.start("prometheus", 1)) {
      hbase.startRegionServer(
          0,
          Plans.settings(
              Plans.plan(
                  CacheMode.PersistentFile, Files.createDirectories(hbase.dir.resolve("cache")))));
      try (AdminHBaseCluster admin = hbase.admin()) {
        hbase.awaitRegionServerReported(admin, 0, Duration.ofSeconds(90));
        TestTable.create(hbase.connection(), "scraped", 200, 2);
        // HBase's metrics system publishes a source's metrics from its first snapshot after the
        // source registers: right after the server reports in, /prometheus may hold only
        // metrics_system_* (seen on a loaded machine, .ci/run's two lanes). Read until the chart's
        // names are there, or give up after 2 min with the last answer.
        HttpClient http = HttpClient.newHttpClient();
        URI uri =
            URI.create(
                "http://" + LocalHBase.HOST + ":" + hbase.regionServerInfoPort(0) + "/prometheus");
        AtomicReference<Set<String>> last = new AtomicReference<>(Set.of());
        Instant t0 = Instant.now();
        try {
          await("the chart's metric names on /prometheus")
              .atMost(Duration.ofMinutes(2))
              .pollInterval(Duration.ofSeconds(2))
              .ignoreExceptionsInstanceOf(java.io.IOException.class) // not listening yet, reset
              .until(
                  () -> {
                    HttpResponse<String> r =
                        http.send(
                            HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).isEqualTo(200);
                    last.set(
                        r.body()
                            .lines()
                            .filter(l -> !l.startsWith("#") && !l.isBlank())
                            .map(l -> l.split("[{ ]", 2)[0])
                            .collect(Collectors.toSet()));
                    return last.get().containsAll(wanted);
                  });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
          // the names that are missing, in AssertJ's words
          assertThat(last.get()).as("HBase's /prometheus").containsAll(wanted);
        }
        Set<String> served = last.get();
        System.out.printf(
            "RESULT a RegionServer's /prometheus: %d metric names, the %d the chart queries all"
                + " there %d ms after the table was created: %s%n",
            served.size(), wanted.size(), Duration.between(t0, Instant.now()).toMillis(), wanted);
      }
    }
  }
}
