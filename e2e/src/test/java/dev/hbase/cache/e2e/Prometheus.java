package dev.hbase.cache.e2e;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
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
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * A real Prometheus (Debian's 2.x binary, installed into ./bin by {@code e2e/kind/tools.sh
 * prometheus}) on the host, scraping the kind cluster through the API server's proxy. What it
 * scrapes and which rules it evaluates come from the chart's own monitoring objects in the cluster
 * ({@link #followTheChart}): its ServiceMonitor (the operator's metrics Service), its PodMonitor
 * (each RegionServer's {@code /prometheus}) and its PrometheusRule, translated as the Prometheus
 * Operator would for the fields the chart sets. The suite asks it every query of the dashboard
 * ConfigMap the chart installed, and for the health of every alerting rule.
 *
 * <p>Over ~400 lines because most of it is the translation of the chart's three monitoring objects
 * into Prometheus' own configuration, which belongs in one place.
 */
final class Prometheus implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML =
      new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory());

  final Instant started = Instant.now();
  final Path dir;
  private final Process process;
  private final String url;
  private final String apiHost;
  private final String tls;
  private final HttpClient http = HttpClient.newHttpClient();

  /** One query of a dashboard panel. */
  record Query(String panel, String expr, String legend) {}

  private Prometheus(Path dir, Process process, String url, String apiHost, String tls) {
    this.dir = dir;
    this.process = process;
    this.url = url;
    this.apiHost = apiHost;
    this.tls = tls;
  }

  /**
   * Started with nothing to scrape: {@link #followTheChart} configures it once the chart is
   * installed.
   */
  static Prometheus start(Path binary, Path dir, Config kube)
      throws IOException, InterruptedException {
    Files.createDirectories(dir);
    URI api = URI.create(kube.getMasterUrl());
    String host = api.getHost() + ":" + (api.getPort() > 0 ? api.getPort() : 443);
    String tls =
        "  tls_config: {ca_file: "
            + pem(dir, "ca.crt", kube.getCaCertData(), kube.getCaCertFile())
            + ", cert_file: "
            + pem(dir, "client.crt", kube.getClientCertData(), kube.getClientCertFile())
            + ", key_file: "
            + pem(dir, "client.key", kube.getClientKeyData(), kube.getClientKeyFile())
            + "}\n";
    Files.writeString(dir.resolve("rules.yml"), "groups: []\n");
    Files.writeString(dir.resolve("prometheus.yml"), global(dir));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Process p =
        new ProcessBuilder(
                binary.toString(),
                "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port,
                "--storage.tsdb.retention.time=1d",
                "--web.enable-lifecycle")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    Prometheus prom = new Prometheus(dir, p, "http://127.0.0.1:" + port, host, tls);
    Instant deadline = Instant.now().plusSeconds(60);
    while (!prom.ready()) {
      if (!p.isAlive() || Instant.now().isAfter(deadline)) {
        p.destroyForcibly();
        throw new IOException(
            "prometheus did not get ready (see " + dir.resolve("prometheus.log") + ")");
      }
      Thread.sleep(500);
    }
    return prom;
  }

  private static String global(Path dir) {
    return "global: {scrape_interval: 30s, scrape_timeout: 5s, evaluation_interval: 15s}\n"
        + "rule_files: ['"
        + dir.resolve("rules.yml")
        + "']\n";
  }

  /**
   * Scrapes and evaluates what the chart's ServiceMonitors, PodMonitors and PrometheusRules in
   * {@code namespace} (those of Helm release {@code release}) say, the way the Prometheus Operator
   * turns them into Prometheus configuration, through the API server's proxy instead of pod IPs:
   * every endpoint of a ServiceMonitor on each Service its selector picks in its namespaces (port
   * by name, path, interval, honorLabels; labels namespace and service), every endpoint of a
   * PodMonitor on each pod its selector picks (port by the container port's name; labels namespace
   * and pod), and every PrometheusRule's groups as a rule file. Reloads Prometheus and returns what
   * it set up.
   */
  List<String> followTheChart(KubernetesClient client, String namespace, String release)
      throws IOException, InterruptedException {
    List<String> out = new ArrayList<>();
    StringBuilder y = new StringBuilder(global(dir)).append("scrape_configs:\n");
    var instance = Map.of("app.kubernetes.io/instance", release);
    for (GenericKubernetesResource sm :
        client
            .genericKubernetesResources("monitoring.coreos.com/v1", "ServiceMonitor")
            .inNamespace(namespace)
            .withLabels(instance)
            .list()
            .getItems()) {
      JsonNode spec = JSON.valueToTree(sm.getAdditionalProperties().get("spec"));
      List<String> namespaces = new ArrayList<>();
      spec.path("namespaceSelector").path("matchNames").forEach(n -> namespaces.add(n.asText()));
      if (namespaces.isEmpty()) {
        namespaces.add(sm.getMetadata().getNamespace());
      }
      Map<String, String> selector =
          JSON.convertValue(spec.path("selector").path("matchLabels"), new TypeReference<>() {});
      int i = 0;
      for (JsonNode ep : spec.path("endpoints")) {
        String job =
            "serviceMonitor/"
                + sm.getMetadata().getNamespace()
                + "/"
                + sm.getMetadata().getName()
                + "/"
                + i++;
        job(y, job, ep);
        for (String ns : namespaces) {
          for (Service svc :
              client.services().inNamespace(ns).withLabels(selector).list().getItems()) {
            target(
                y,
                ns,
                "service",
                svc.getMetadata().getName(),
                "/api/v1/namespaces/"
                    + ns
                    + "/services/"
                    + svc.getMetadata().getName()
                    + ":"
                    + ep.path("port").asText()
                    + "/proxy"
                    + ep.path("path").asText("/metrics"));
            out.add(
                String.format(
                    "%s: Service %s/%s port %s %s every %s, honorLabels %s",
                    job,
                    ns,
                    svc.getMetadata().getName(),
                    ep.path("port").asText(),
                    ep.path("path").asText("/metrics"),
                    ep.path("interval").asText("30s"),
                    ep.path("honorLabels").asBoolean(false)));
          }
        }
      }
    }
    for (GenericKubernetesResource pm :
        client
            .genericKubernetesResources("monitoring.coreos.com/v1", "PodMonitor")
            .inNamespace(namespace)
            .withLabels(instance)
            .list()
            .getItems()) {
      JsonNode spec = JSON.valueToTree(pm.getAdditionalProperties().get("spec"));
      Map<String, String> selector =
          JSON.convertValue(spec.path("selector").path("matchLabels"), new TypeReference<>() {});
      List<String> matchNames = new ArrayList<>();
      spec.path("namespaceSelector").path("matchNames").forEach(n -> matchNames.add(n.asText()));
      boolean any = spec.path("namespaceSelector").path("any").asBoolean(false);
      List<Pod> pods =
          client.pods().inAnyNamespace().withLabels(selector).list().getItems().stream()
              .filter(
                  p ->
                      any
                          ? true
                          : matchNames.isEmpty()
                              ? p.getMetadata()
                                  .getNamespace()
                                  .equals(pm.getMetadata().getNamespace())
                              : matchNames.contains(p.getMetadata().getNamespace()))
              .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
              .toList();
      int i = 0;
      for (JsonNode ep : spec.path("podMetricsEndpoints")) {
        String job =
            "podMonitor/"
                + pm.getMetadata().getNamespace()
                + "/"
                + pm.getMetadata().getName()
                + "/"
                + i++;
        job(y, job, ep);
        for (Pod pod : pods) {
          Integer port =
              pod.getSpec().getContainers().stream()
                  .flatMap(c -> c.getPorts().stream())
                  .filter(cp -> ep.path("port").asText().equals(cp.getName()))
                  .map(cp -> cp.getContainerPort())
                  .findFirst()
                  .orElse(null);
          if (port == null) {
            continue; // the Prometheus Operator skips a pod without that port name too
          }
          target(
              y,
              pod.getMetadata().getNamespace(),
              "pod",
              pod.getMetadata().getName(),
              "/api/v1/namespaces/"
                  + pod.getMetadata().getNamespace()
                  + "/pods/"
                  + pod.getMetadata().getName()
                  + ":"
                  + port
                  + "/proxy"
                  + ep.path("path").asText("/metrics"));
          out.add(
              String.format(
                  "%s: pod %s/%s port %s (%d) %s every %s",
                  job,
                  pod.getMetadata().getNamespace(),
                  pod.getMetadata().getName(),
                  ep.path("port").asText(),
                  port,
                  ep.path("path").asText("/metrics"),
                  ep.path("interval").asText("30s")));
        }
      }
    }
    List<Object> groups = new ArrayList<>();
    for (GenericKubernetesResource pr :
        client
            .genericKubernetesResources("monitoring.coreos.com/v1", "PrometheusRule")
            .inNamespace(namespace)
            .withLabels(instance)
            .list()
            .getItems()) {
      JsonNode spec = JSON.valueToTree(pr.getAdditionalProperties().get("spec"));
      for (JsonNode g : spec.path("groups")) {
        groups.add(JSON.convertValue(g, Object.class));
        out.add(
            String.format(
                "PrometheusRule %s: group %s, %d rules",
                pr.getMetadata().getName(), g.path("name").asText(), g.path("rules").size()));
      }
    }
    Files.writeString(dir.resolve("rules.yml"), YAML.writeValueAsString(Map.of("groups", groups)));
    Files.writeString(dir.resolve("prometheus.yml"), y.toString());
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + "/-/reload"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException(
          "prometheus reload: "
              + r.statusCode()
              + " "
              + r.body()
              + " (see "
              + dir.resolve("prometheus.log")
              + ")");
    }
    return out;
  }

  private void job(StringBuilder y, String job, JsonNode ep) {
    y.append("- job_name: '")
        .append(job)
        .append("'\n  scheme: https\n")
        .append("  honor_labels: ")
        .append(ep.path("honorLabels").asBoolean(false))
        .append('\n')
        .append("  scrape_interval: ")
        .append(ep.path("interval").asText("30s"))
        .append('\n')
        .append(tls)
        .append("  static_configs:\n");
  }

  private void target(StringBuilder y, String ns, String kind, String name, String path) {
    y.append("  - targets: ['")
        .append(apiHost)
        .append("']\n")
        .append("    labels: {namespace: ")
        .append(ns)
        .append(", ")
        .append(kind)
        .append(": ")
        .append(name)
        .append(", __metrics_path__: ")
        .append(path)
        .append("}\n");
  }

  /** Every loaded rule: group, name, health ("ok", "err", "unknown") and last error. */
  List<String> rules() throws IOException, InterruptedException {
    JsonNode r = get("/api/v1/rules");
    List<String> out = new ArrayList<>();
    for (JsonNode g : r.path("data").path("groups")) {
      for (JsonNode rule : g.path("rules")) {
        out.add(
            g.path("name").asText()
                + "/"
                + rule.path("name").asText()
                + " "
                + rule.path("health").asText()
                + " "
                + rule.path("lastError").asText("")
                + (rule.has("state") ? "(" + rule.path("state").asText() + ")" : ""));
      }
    }
    return out;
  }

  private boolean ready() {
    try {
      return http.send(
                  HttpRequest.newBuilder(URI.create(url + "/-/ready")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .statusCode()
          == 200;
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
      out.add(
          t.path("labels").path("job").asText()
              + " "
              + t.path("labels").path("pod").asText("")
              + " "
              + t.path("health").asText()
              + " "
              + t.path("lastError").asText(""));
    }
    return out;
  }

  /** The expression evaluated every {@code step} from {@code from} to now: one entry per series. */
  List<JsonNode> range(String expr, Instant from, Duration step)
      throws IOException, InterruptedException {
    JsonNode r =
        get(
            "/api/v1/query_range?query="
                + URLEncoder.encode(expr, StandardCharsets.UTF_8)
                + "&start="
                + from.getEpochSecond()
                + "&end="
                + Instant.now().getEpochSecond()
                + "&step="
                + step.toSeconds());
    if (!"success".equals(r.path("status").asText())) {
      throw new IOException("query " + expr + ": " + r);
    }
    List<JsonNode> out = new ArrayList<>();
    r.path("data").path("result").forEach(out::add);
    return out;
  }

  private JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(r.body());
  }

  /**
   * Every target query of the dashboard's panels, with the dashboard's variables at "All" ({@code
   * $namespace}, {@code $policy} as {@code .*}).
   */
  static List<Query> dashboardQueries(String dashboardJson) throws IOException {
    List<Query> out = new ArrayList<>();
    for (JsonNode p : JSON.readTree(dashboardJson).path("panels")) {
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
