package dev.hbase.cache.operator.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.operator.BlockCacheOperator;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.HBaseCluster;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.metrics.CacheProbe;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The operator in a process of its own, for {@code make bench-operator}'s memory figure: {@link
 * BlockCacheOperator} with the production reconciler, started as {@code BlockCacheOperator.main}
 * starts it (all namespaces, /metrics served), from the operator's jar. Only its two seams to HBase
 * differ: the admin calls and the /jmx samples go over HTTP to the benchmark's simulated clusters
 * ({@link HBaseBridge}), so the HBase client's classes are not loaded (in production they are: its
 * metaspace is larger than this process's). Arguments: the bridge's URL, the HTTP port.
 *
 * <p>{@code -Dbridge.realJmx=<ip prefix>=<port>,<port>...}: the pods whose IP starts with the
 * prefix are asked by the production {@link JmxScraper} on the loopback instead, ordinals 0-7 (the
 * IP's last number less 10) at the first port, 8-15 at the next, and so on (the noisy neighbour's
 * stalling info ports: {@code NoisyNeighbourPoint}).
 */
public final class BridgedOperator {
  private static final ObjectMapper JSON = new ObjectMapper().findAndRegisterModules();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private BridgedOperator() {}

  public static void main(String[] args) throws Exception {
    String bridge = args[0];
    KubernetesClient client = new KubernetesClientBuilder().build(); // KUBECONFIG
    BlockCachePolicyReconciler reconciler =
        new BlockCachePolicyReconciler(
            Clock.systemUTC(),
            (settings, login) -> cluster(bridge, settings.get("hbase.zookeeper.quorum")),
            probe(bridge));
    BlockCacheOperator op = new BlockCacheOperator(client, Set.of(), null, reconciler);
    op.serveHttp(Integer.parseInt(args[1]), 0, client);
    op.start();
    System.out.println("BRIDGED OPERATOR STARTED");
    // runs until the benchmark closes this process's standard input
    while (System.in.read() >= 0) {
      // nothing to read
    }
    op.stop();
    client.close();
    System.exit(0);
  }

  static HBaseCluster cluster(String bridge, String quorum) {
    return (HBaseCluster)
        Proxy.newProxyInstance(
            HBaseCluster.class.getClassLoader(),
            new Class<?>[] {HBaseCluster.class},
            (proxy, m, args) -> {
              switch (m.getName()) {
                case "close":
                  return null;
                case "toString":
                  return "bridged HBase " + quorum;
                case "hashCode":
                  return System.identityHashCode(proxy);
                case "equals":
                  return proxy == args[0];
                default:
                  return call(bridge + "/hbase/" + m.getName() + "?quorum=" + enc(quorum), m, args);
              }
            });
  }

  static CacheProbe probe(String bridge) {
    String real = System.getProperty("bridge.realJmx", "");
    String prefix = real.contains("=") ? real.substring(0, real.indexOf('=')) : null;
    int[] ports =
        prefix == null
            ? new int[0]
            : Arrays.stream(real.substring(real.indexOf('=') + 1).split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
    JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5)); // as production makes it
    return new CacheProbe() {
      @Override
      public CacheSample scrape(String host, int infoPort) throws IOException {
        if (prefix != null && host.startsWith(prefix)) {
          int ordinal = Integer.parseInt(host.substring(prefix.length())) - 10;
          return scraper.scrape("127.0.0.1", ports[Math.min(ordinal / 8, ports.length - 1)]);
        }
        return (CacheSample) bridged("scrape", host, infoPort);
      }

      @Override
      public Long gcTimeMillis(String host, int infoPort) throws IOException {
        return (Long) bridged("gcTimeMillis", host, infoPort);
      }

      private Object bridged(String name, String host, int infoPort) throws IOException {
        try {
          Method m = CacheProbe.class.getMethod(name, String.class, int.class);
          return call(bridge + "/probe/" + name, m, new Object[] {host, infoPort});
        } catch (IOException e) {
          throw e;
        } catch (Exception e) {
          throw new IOException(e.getMessage(), e);
        }
      }
    };
  }

  /** Sends the call's arguments as a JSON array; answers {"value": ...} or {"error", "message"}. */
  static Object call(String url, Method m, Object[] args) throws Exception {
    List<Object> a = args == null ? List.of() : Arrays.asList(args);
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(a)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode n = JSON.readTree(r.body());
    if (n.has("error")) {
      String message = n.path("message").asText();
      String error = n.get("error").asText();
      boolean declared =
          Arrays.stream(m.getExceptionTypes())
              .anyMatch(t -> t.isAssignableFrom(HBaseClusterException.class));
      if (error.equals("NotReady") || error.equals("HBaseClusterException")) {
        error = declared ? error : "unchecked";
      }
      switch (error) {
        case "NotReady" -> throw new HBaseClusterException.NotReady(message);
        case "HBaseClusterException" -> throw new HBaseClusterException(message);
        case "IOException" -> throw new IOException(message);
        default -> throw new IllegalStateException(message);
      }
    }
    if (m.getReturnType() == void.class) {
      return null;
    }
    return JSON.convertValue(
        n.get("value"), JSON.getTypeFactory().constructType(m.getGenericReturnType()));
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
