package dev.hbase.cache.operator;

import com.sun.net.httpserver.HttpServer;
import dev.hbase.cache.operator.connection.HBaseConnector;
import dev.hbase.cache.operator.controller.BlockCachePolicyReconciler;
import dev.hbase.cache.operator.hbase.AdminHBaseCluster;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.RpcAnswerCap;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.metrics.PolicyMetrics;
import dev.hbase.cache.operator.plan.JvmOptions;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.javaoperatorsdk.operator.monitoring.micrometer.MicrometerMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.Security;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator process: JOSDK with one controller, Prometheus metrics, health probes and optional
 * leader election. Settings come from the environment (the Helm chart sets them):
 *
 * <ul>
 *   <li>{@code WATCH_NAMESPACES}: comma-separated namespaces; empty or unset: all namespaces.
 *   <li>{@code LEADER_ELECTION}: {@code true} to run several replicas, one active.
 *   <li>{@code LEADER_ELECTION_LEASE} (default {@code hbase-cache-operator}), {@code
 *       POD_NAMESPACE}.
 *   <li>{@code ALLOW_JVM_AGENTS} ({@code true}: policies may load JVM agents, default false),
 *       {@code ALLOW_ANY_JVM_OPTIONS} ({@code true}: any jvm.extraOptions but the sized ones;
 *       default false: the allow-list of {@link JvmOptions}).
 *   <li>{@code HBASE_ANSWER_CAP_MIB} (default 16): the largest answer read from an HMaster or a
 *       RegionServer ({@link dev.hbase.cache.operator.hbase.RpcAnswerCap}).
 *   <li>{@code HTTP_PORT} (default 8080): {@code /metrics}.
 *   <li>{@code PROBE_PORT} (default 8081): {@code /healthz} (fails after a minute without an answer
 *       from the API server) and {@code /readyz}, on a listener of their own ({@link ProbeServer}).
 * </ul>
 */
public final class BlockCacheOperator {
  private static final Logger log = LoggerFactory.getLogger(BlockCacheOperator.class);

  private final Operator operator;
  private final BlockCachePolicyReconciler reconciler;
  private final PrometheusMeterRegistry registry;
  private HttpServer http;
  private ProbeServer probes;

  /** How long the API server may not answer before /healthz fails. */
  static final Duration HEALTH_GRACE = Duration.ofSeconds(60);

  private final ScheduledExecutorService checks =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "api-server-health");
            t.setDaemon(true);
            return t;
          });

  /** How long a client may take to send its request before the server closes the exchange. */
  public static final long MAX_REQUEST_SECONDS = 5;

  /** Scrapes served at once; the pool has two threads more, to turn a third away (503). */
  public static final int SCRAPES = 2;

  private final java.util.concurrent.Semaphore scrapes =
      new java.util.concurrent.Semaphore(SCRAPES);

  /**
   * Threads serving /metrics (the probes have their own listener and thread: {@link ProbeServer}).
   */
  private final java.util.concurrent.ExecutorService httpPool =
      Executors.newFixedThreadPool(
          SCRAPES + 2,
          r -> {
            Thread t = new Thread(r, "http");
            t.setDaemon(true);
            return t;
          });

  public BlockCacheOperator(
      KubernetesClient client,
      Set<String> namespaces,
      LeaderElectionConfiguration leaderElection,
      BlockCachePolicyReconciler reconciler) {
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // reconcile time as a histogram, for its p99 (histogram_quantile) in Prometheus
    registry
        .config()
        .meterFilter(
            new MeterFilter() {
              @Override
              public DistributionStatisticConfig configure(
                  Meter.Id id, DistributionStatisticConfig config) {
                return id.getName().startsWith("operator.sdk.controllers.execution")
                    ? DistributionStatisticConfig.builder()
                        .percentilesHistogram(true)
                        .build()
                        .merge(config)
                    : config;
              }
            });
    new JvmMemoryMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    io.micrometer.core.instrument.FunctionCounter.builder(
            "hbase_cache_operator_reconciles_turned_away",
            reconciler,
            BlockCachePolicyReconciler::reconcilesTurnedAway)
        .description(
            "Reconciles turned away, to come back a second later, because 10 of their namespace's"
                + " policies were reconciling already")
        .register(registry);
    io.micrometer.core.instrument.Gauge.builder(
            "hbase_cache_operator_hbase_buffers_bytes",
            dev.hbase.cache.operator.hbase.RpcAnswerCap::bufferBytes)
        .description(
            "What the buffers of all the operator's HBase connections hold now (answers being"
                + " read)")
        .baseUnit("bytes")
        .register(registry);
    io.micrometer.core.instrument.Gauge.builder(
            "hbase_cache_operator_hbase_buffers_limit_bytes",
            dev.hbase.cache.operator.hbase.RpcAnswerCap::bufferLimit)
        .description("The limit on what those buffers hold in all (an eighth of the heap)")
        .baseUnit("bytes")
        .register(registry);
    io.micrometer.core.instrument.FunctionCounter.builder(
            "hbase_cache_operator_hbase_connections_closed_for_buffers",
            dev.hbase.cache.operator.hbase.RpcAnswerCap.class,
            c -> dev.hbase.cache.operator.hbase.RpcAnswerCap.connectionsClosedForBuffers())
        .description(
            "HBase connections closed because their buffers had held an unfinished answer the"
                + " longest when all of them together passed their limit")
        .register(registry);
    this.reconciler = reconciler;
    this.operator =
        new Operator(
            o -> {
              o.withKubernetesClient(client)
                  // the client is its creator's (main, a test): open for the last events
                  .withCloseClientOnStop(false)
                  .withMetrics(
                      MicrometerMetrics.newPerResourceCollectingMicrometerMetricsBuilder(registry)
                          .build())
                  .withCloseClientOnStop(false);
              if (leaderElection != null) {
                o.withLeaderElectionConfiguration(leaderElection);
              }
            });
    operator.register(
        reconciler,
        c -> {
          if (namespaces.isEmpty()) {
            c.watchingAllNamespaces();
          } else {
            c.settingNamespaces(namespaces);
          }
        });
  }

  public void start() {
    operator.start();
  }

  /**
   * Serves /metrics (Prometheus) on {@code port}, and on {@code probePort} /healthz (the API server
   * answered within the last minute: {@link ApiServerHealth}) and /readyz (informers healthy), on a
   * listener of their own that neither scrapes nor stalled clients can hold ({@link ProbeServer}).
   * Port 0: any free one ({@link #probePort}).
   */
  public void serveHttp(int port, int probePort, KubernetesClient client) throws IOException {
    ApiServerHealth health =
        new ApiServerHealth(client::getKubernetesVersion, Clock.systemUTC(), HEALTH_GRACE);
    checks.scheduleWithFixedDelay(health::check, 0, 10, TimeUnit.SECONDS);
    probes =
        new ProbeServer(
            probePort,
            Map.of(
                "/healthz",
                () -> {
                  String problem = health.problem();
                  return new ProbeServer.Answer(
                      problem == null ? 200 : 503, problem == null ? "ok" : problem);
                },
                "/readyz",
                () -> {
                  var info = operator.getRuntimeInfo();
                  boolean ready = info.isStarted() && info.allEventSourcesAreHealthy();
                  return new ProbeServer.Answer(
                      ready ? 200 : 503,
                      ready ? "ok" : "not ready: " + info.unhealthyEventSources());
                }));
    // A client that sends part of a request and stalls holds a pool thread while the server reads
    // it: the JDK server closes such an exchange after maxReqTime (none by default), and one whose
    // response the client does not read after maxRspTime. Read once, at the JVM's first server.
    System.setProperty(
        "sun.net.httpserver.maxReqTime",
        System.getProperty("sun.net.httpserver.maxReqTime", Long.toString(MAX_REQUEST_SECONDS)));
    System.setProperty(
        "sun.net.httpserver.maxRspTime", System.getProperty("sun.net.httpserver.maxRspTime", "30"));
    http = HttpServer.create(new InetSocketAddress(port), 0);
    // Each exchange on a pool thread of its own: without an executor the server runs every handler
    // on its one dispatcher thread.
    http.setExecutor(httpPool);
    http.createContext(
        "/metrics",
        ex -> {
          // at most SCRAPES at once: a third is turned away at once
          if (!scrapes.tryAcquire()) {
            respond(ex, 503, "another scrape is in progress");
            return;
          }
          try {
            // Prometheus 3 refuses a scrape without a content type it knows
            ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            respond(ex, 200, registry.scrape() + PolicyMetrics.render(reconciler.policies()));
          } finally {
            scrapes.release();
          }
        });
    http.start();
  }

  /** The port /healthz and /readyz answer on ({@link #serveHttp}). */
  public int probePort() {
    return probes.port();
  }

  public void stop() {
    checks.shutdownNow();
    httpPool.shutdownNow();
    operator.stop();
    reconciler.close(); // sends the events the last reconciles recorded
    if (http != null) {
      http.stop(0);
    }
    if (probes != null) {
      probes.close();
    }
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  private static void respond(com.sun.net.httpserver.HttpExchange ex, int code, String body)
      throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(b);
    }
  }

  /**
   * The production HBase side: the Admin API and the JMX scraper; {@code ALLOW_JVM_AGENTS=true}
   * lets policies load JVM agents into the RegionServers.
   */
  public static BlockCachePolicyReconciler productionReconciler() {
    return productionReconciler(() -> true);
  }

  /**
   * {@link #productionReconciler()} with the roll's actions fenced by the leader lease: an operator
   * that lost it ({@code leading} false) deletes no pod and sends no drain, move, recommission or
   * balancer switch while it exits.
   */
  public static BlockCachePolicyReconciler productionReconciler(BooleanSupplier leading) {
    HBaseConnector connector =
        (settings, login) -> {
          try {
            return AdminHBaseCluster.connect(
                settings, AdminHBaseCluster.Options.defaults().withLeading(leading), login);
          } catch (HBaseClusterException e) {
            throw new IllegalStateException(e.getMessage(), e);
          }
        };
    JmxScraper scraper = new JmxScraper(Duration.ofSeconds(5));
    CacheProbe probe =
        new CacheProbe() {
          @Override
          public CacheSample scrape(String host, int infoPort) throws IOException {
            return scraper.scrape(host, infoPort);
          }

          @Override
          public Long gcTimeMillis(String host, int infoPort) throws IOException {
            return scraper.gcTimeMillis(host, infoPort);
          }
        };
    return new BlockCachePolicyReconciler(
        Clock.systemUTC(),
        connector,
        probe,
        JvmOptions.Trust.of(
            Boolean.parseBoolean(System.getenv().getOrDefault("ALLOW_JVM_AGENTS", "false")),
            Boolean.parseBoolean(System.getenv().getOrDefault("ALLOW_ANY_JVM_OPTIONS", "false"))),
        leading,
        dev.hbase.cache.operator.metrics.SecuredProbes.jmx(Duration.ofSeconds(5)),
        System.getenv()
            .getOrDefault("CLUSTER_DOMAIN", BlockCachePolicyReconciler.DEFAULT_CLUSTER_DOMAIN));
  }

  public static void main(List<String> args) throws IOException {
    // A restarted RegionServer pod gets a new IP under the same name: don't cache DNS for 30 s.
    Security.setProperty("networkaddress.cache.ttl", "1");
    Security.setProperty("networkaddress.cache.negative.ttl", "0");
    Map<String, String> env = System.getenv();
    RpcAnswerCap.limitMib(RpcAnswerCap.parseMib(env.get("HBASE_ANSWER_CAP_MIB")));
    Supplier<String> podNs = () -> env.getOrDefault("POD_NAMESPACE", "default");
    Set<String> namespaces =
        Arrays.stream(env.getOrDefault("WATCH_NAMESPACES", "").split(","))
            .map(String::trim)
            .filter(s -> !s.isEmpty())
            .collect(Collectors.toSet());
    // A leader that loses its lease exits so that a standby takes over with fresh caches; but not
    // while the JVM is already shutting down (System.exit in a shutdown hook blocks forever, and
    // the pod would sit out its whole grace period).
    AtomicBoolean stopping = new AtomicBoolean();
    boolean elect = Boolean.parseBoolean(env.getOrDefault("LEADER_ELECTION", "false"));
    // the fence of every roll action: false from the moment the lease is lost (before the exit,
    // whose shutdown hooks take seconds while reconciles and queued region moves still run)
    AtomicBoolean leading = new AtomicBoolean(!elect);
    LeaderElectionConfiguration le =
        elect
            ? new LeaderElectionConfiguration(
                env.getOrDefault("LEADER_ELECTION_LEASE", "hbase-cache-operator"),
                podNs.get(),
                LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE,
                LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE,
                LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE,
                env.get("HOSTNAME"),
                new LeaderCallbacks(
                    () -> {
                      leading.set(true);
                      log.info("leading");
                    },
                    () -> {
                      leading.set(false);
                      if (!stopping.get()) {
                        log.error("lost the leader lease: exiting so that a standby takes over");
                        System.exit(1);
                      }
                    },
                    leader -> log.info("leader is {}", leader)),
                false)
            : null;
    KubernetesClient client = new KubernetesClientBuilder().build();
    BlockCacheOperator op =
        new BlockCacheOperator(client, namespaces, le, productionReconciler(leading::get));
    op.serveHttp(
        Integer.parseInt(env.getOrDefault("HTTP_PORT", "8080")),
        Integer.parseInt(env.getOrDefault("PROBE_PORT", "8081")),
        client);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stopping.set(true);
                  op.stop();
                  client.close();
                },
                "shutdown"));
    log.info(
        "starting; namespaces={} leaderElection={}",
        namespaces.isEmpty() ? "all" : namespaces,
        le != null);
    op.start();
  }
}
