package dev.hbase.cache.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A real Prometheus (Debian's 2.x binary, installed into ./bin by {@code e2e/kind/tools.sh
 * prometheus}) on the host, scraping the kind cluster through the API server's proxy every 5 s: the
 * operator's metrics Service the way the chart's ServiceMonitor asks (honorLabels: the policy's own
 * {@code namespace} label wins over the Service's), and each RegionServer's {@code /prometheus} on
 * its info port with the {@code namespace} and {@code pod} labels a PodMonitor gives. The suite asks
 * it every query of the chart's Grafana dashboard over the run.
 */
final class Prometheus implements AutoCloseable {
  static final Duration SCRAPE = Duration.ofSeconds(5);
  private static final ObjectMapper JSON = new ObjectMapper();

  final Instant started = Instant.now();
  final Path dir;
  private final Process process;
  private final String url;
  private final HttpClient http = HttpClient.newHttpClient();

  /** One query of a dashboard panel. */
  record Query(String panel, String expr, String legend) {}

  private Prometheus(Path dir, Process process, String url) {
    this.dir = dir;
    this.process = process;
    this.url = url;
  }

  static Prometheus start(Path binary, Path dir, Config kube, String operatorNs, String operatorService, String hbaseNs,
      List<String> regionServers) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    URI api = URI.create(kube.getMasterUrl());
    String host = api.getHost() + ":" + (api.getPort() > 0 ? api.getPort() : 443);
    String tls = "  tls_config: {ca_file: " + pem(dir, "ca.crt", kube.getCaCertData(), kube.getCaCertFile())
        + ", cert_file: " + pem(dir, "client.crt", kube.getClientCertData(), kube.getClientCertFile())
        + ", key_file: " + pem(dir, "client.key", kube.getClientKeyData(), kube.getClientKeyFile()) + "}\n";
    StringBuilder y = new StringBuilder("global: {scrape_interval: " + SCRAPE.toSeconds() + "s, scrape_timeout: 4s}\n"
        + "scrape_configs:\n");
    // the ServiceMonitor's target: the operator's metrics Service, honorLabels true
    y.append("- job_name: operator\n  scheme: https\n  honor_labels: true\n")
        .append("  metrics_path: /api/v1/namespaces/").append(operatorNs).append("/services/").append(operatorService)
        .append(":http-metrics/proxy/metrics\n").append(tls)
        .append("  static_configs:\n  - targets: ['").append(host).append("']\n")
        .append("    labels: {namespace: ").append(operatorNs).append(", service: ").append(operatorService).append("}\n");
    // the PodMonitor's targets: every RegionServer's /prometheus (HBase's info port)
    y.append("- job_name: regionservers\n  scheme: https\n  scrape_interval: 15s\n").append(tls).append("  static_configs:\n");
    for (String pod : regionServers) {
      y.append("  - targets: ['").append(host).append("']\n").append("    labels: {namespace: ").append(hbaseNs)
          .append(", pod: ").append(pod).append(", __metrics_path__: /api/v1/namespaces/").append(hbaseNs).append("/pods/")
          .append(pod).append(":16030/proxy/prometheus}\n");
    }
    Files.writeString(dir.resolve("prometheus.yml"), y.toString());
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Process p = new ProcessBuilder(binary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
        "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port,
        "--storage.tsdb.retention.time=1d")
        .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
    Prometheus prom = new Prometheus(dir, p, "http://127.0.0.1:" + port);
    Instant deadline = Instant.now().plusSeconds(60);
    while (!prom.ready()) {
      if (!p.isAlive() || Instant.now().isAfter(deadline)) {
        p.destroyForcibly();
        throw new IOException("prometheus did not get ready (see " + dir.resolve("prometheus.log") + ")");
      }
      Thread.sleep(500);
    }
    return prom;
  }

  private boolean ready() {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url + "/-/ready")).build(), HttpResponse.BodyHandlers.ofString())
          .statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Scrape targets and their health ("up", "down") with the last error. */
  List<String> targets() throws IOException, InterruptedException {
    JsonNode r = get("/api/v1/targets?state=active");
    List<String> out = new ArrayList<>();
    for (JsonNode t : r.path("data").path("activeTargets")) {
      out.add(t.path("labels").path("job").asText() + " " + t.path("labels").path("pod").asText("") + " "
          + t.path("health").asText() + " " + t.path("lastError").asText(""));
    }
    return out;
  }

  /** The expression evaluated every {@code step} from {@code from} to now: one entry per series. */
  List<JsonNode> range(String expr, Instant from, Duration step) throws IOException, InterruptedException {
    JsonNode r = get("/api/v1/query_range?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8) + "&start="
        + from.getEpochSecond() + "&end=" + Instant.now().getEpochSecond() + "&step=" + step.toSeconds());
    if (!"success".equals(r.path("status").asText())) {
      throw new IOException("query " + expr + ": " + r);
    }
    List<JsonNode> out = new ArrayList<>();
    r.path("data").path("result").forEach(out::add);
    return out;
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(r.body());
  }

  /**
   * Every target query of the dashboard's panels, with the dashboard's variables at "All" ({@code
   * $namespace}, {@code $policy} as {@code .*}).
   */
  static List<Query> dashboardQueries(Path dashboard) throws IOException {
    List<Query> out = new ArrayList<>();
    for (JsonNode p : JSON.readTree(dashboard.toFile()).path("panels")) {
      for (JsonNode t : p.path("targets")) {
        String expr = t.path("expr").asText().replace("$namespace", ".*").replace("$policy", ".*");
        out.add(new Query(p.path("title").asText(), expr, t.path("legendFormat").asText()));
      }
    }
    return out;
  }

  private static String pem(Path dir, String name, String base64, String file) throws IOException {
    if (base64 == null || base64.isEmpty()) {
      return file;
    }
    Path p = dir.resolve(name);
    Files.write(p, Base64.getDecoder().decode(base64.trim()));
    return p.toString();
  }

  @Override
  public void close() {
    process.destroy();
    try {
      process.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
