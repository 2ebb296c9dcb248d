package dev.hbase.cache.e2e;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * One RegionServer's block cache figures, read as a user would: {@code /jmx} on the info port
 * (16030), through the API server's pod proxy. Counters are cumulative since the RegionServer
 * started ({@code startTime} changes on restart).
 */
record Jmx(
    Instant at,
    String pod,
    long startTime,
    String serverName,
    long dataHits,
    long dataMisses,
    long l2Used,
    long l2Free,
    long l1Used,
    long l1Free,
    long failedInsertions,
    long regionCount) {

  static final String BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server";
  private static final ObjectMapper JSON = new ObjectMapper();

  long l2Capacity() {
    return l2Used + l2Free;
  }

  long dataReads() {
    return dataHits + dataMisses;
  }

  /** Data-block hit ratio of the reads between {@code earlier} and this sample (same instance). */
  Double ratioSince(Jmx earlier) {
    long h = dataHits - (earlier == null ? 0 : earlier.dataHits);
    long m = dataMisses - (earlier == null ? 0 : earlier.dataMisses);
    return h + m == 0 ? null : (double) h / (h + m);
  }

  /**
   * Reads the pod's /jmx every {@code every} until {@code until} holds; read errors are retried.
   */
  static Jmx awaitUntil(
      KubernetesClient client,
      String ns,
      String pod,
      String what,
      Duration atMost,
      Duration every,
      Predicate<Jmx> until) {
    AtomicReference<Jmx> seen = new AtomicReference<>();
    // the first look at once (Awaitility's first look is otherwise one interval late: 2-3 s per pod
    // before every observed roll)
    await(what)
        .atMost(atMost)
        .pollDelay(Duration.ZERO)
        .pollInterval(every)
        .ignoreExceptions()
        .until(
            () -> {
              seen.set(read(client, ns, pod));
              return until.test(seen.get());
            });
    return seen.get();
  }

  static Jmx read(KubernetesClient client, String ns, String pod) throws IOException {
    JsonNode root = JSON.readTree(get(client, ns, pod, BEAN));
    for (JsonNode bean : root.path("beans")) {
      if (BEAN.equals(bean.path("name").asText())) {
        return new Jmx(
            Instant.now(),
            pod,
            bean.path("regionServerStartTime").asLong(),
            bean.path("tag.serverName").asText(),
            bean.path("blockCacheDataHitCount").asLong(),
            bean.path("blockCacheDataMissCount").asLong(),
            bean.path("l2CacheSize").asLong(),
            bean.path("l2CacheFreeSize").asLong(),
            bean.path("l1CacheSize").asLong(),
            bean.path("l1CacheFreeSize").asLong(),
            bean.path("blockCacheFailedInsertionCount").asLong(),
            bean.path("regionCount").asLong());
      }
    }
    throw new IOException("no bean " + BEAN + " in the answer of " + pod);
  }

  /**
   * Whether the RegionServer in the pod serves hbase:meta (its per-region metrics name the region).
   */
  static boolean hostsMeta(KubernetesClient client, String ns, String pod) throws IOException {
    return get(client, ns, pod, "Hadoop:service=HBase,name=RegionServer,sub=Regions")
        .contains("Namespace_hbase_table_meta_region_");
  }

  /** The /jmx answer for one bean of the pod's RegionServer. */
  private static String get(KubernetesClient client, String ns, String pod, String bean)
      throws IOException {
    String url =
        client.getMasterUrl().toString().replaceAll("/$", "")
            + "/api/v1/namespaces/"
            + ns
            + "/pods/"
            + pod
            + ":16030/proxy/jmx?qry="
            + bean.replace("=", "%3D").replace(",", "%2C").replace(":", "%3A");
    HttpResponse<String> r;
    try {
      r =
          client
              .getHttpClient()
              .sendAsync(
                  client
                      .getHttpClient()
                      .newHttpRequestBuilder()
                      .uri(url)
                      .timeout(10, TimeUnit.SECONDS)
                      .build(),
                  String.class)
              .get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IOException("GET " + url + ": " + e, e);
    }
    if (r.code() != 200) {
      throw new IOException("GET " + url + ": HTTP " + r.code());
    }
    return r.body();
  }
}
