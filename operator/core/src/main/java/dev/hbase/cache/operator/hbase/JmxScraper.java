package dev.hbase.cache.operator.hbase;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/** Reads {@link CacheSample}s from RegionServer info ports over HTTP (the {@code /jmx} servlet). */
public final class JmxScraper {

  public static final int DEFAULT_INFO_PORT = 16030;

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http;
  private final Duration timeout;
  private final Clock clock;

  public JmxScraper(Duration timeout) {
    this(
        HttpClient.newBuilder()
            .connectTimeout(timeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build(),
        timeout,
        Clock.systemUTC());
  }

  public JmxScraper(HttpClient http, Duration timeout, Clock clock) {
    this.http = http;
    this.timeout = timeout;
    this.clock = clock;
  }

  /** The URL scraped for a RegionServer at host:infoPort. */
  public static URI uri(String host, int infoPort) {
    return uri(host, infoPort, CacheSample.BEAN);
  }

  static URI uri(String host, int infoPort, String bean) {
    String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    return URI.create("http://" + h + ":" + infoPort + "/jmx?qry=" + bean.replace(" ", "%20"));
  }

  public CacheSample scrape(String host, int infoPort) throws ScrapeException {
    return scrape(uri(host, infoPort));
  }

  public CacheSample scrape(URI uri) throws ScrapeException {
    String body = get(uri);
    Instant at = clock.instant();
    try {
      return CacheSample.fromJmxJson(body, at);
    } catch (IOException e) {
      throw new ScrapeException(uri, e.getMessage(), e);
    }
  }

  /** The bean with the RegionServer JVM's garbage collection time. */
  public static final String JVM_BEAN = "Hadoop:service=HBase,name=JvmMetrics";

  /**
   * Milliseconds the RegionServer's JVM spent in garbage collection since it started ({@code
   * GcTimeMillis} of {@value #JVM_BEAN}): a second, small request, made only for sizing advice.
   */
  public long gcTimeMillis(String host, int infoPort) throws ScrapeException {
    URI uri = uri(host, infoPort, JVM_BEAN);
    String body = get(uri);
    try {
      JsonNode beans = JSON.readTree(body).path("beans");
      for (JsonNode bean : beans) {
        if (JVM_BEAN.equals(bean.path("name").asText()) && bean.path("GcTimeMillis").isNumber()) {
          return bean.path("GcTimeMillis").asLong();
        }
      }
      throw new IOException("no GcTimeMillis in " + JVM_BEAN);
    } catch (IOException e) {
      throw new ScrapeException(uri, e.getMessage(), e);
    }
  }

  private String get(URI uri) throws ScrapeException {
    HttpRequest request =
        HttpRequest.newBuilder(uri)
            .timeout(timeout)
            .header("Accept", "application/json")
            .GET()
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      throw new ScrapeException(uri, "no answer within " + timeout.toMillis() + " ms", e);
    } catch (IOException e) {
      throw new ScrapeException(uri, "cannot connect: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ScrapeException(uri, "interrupted", e);
    }
    if (response.statusCode() != 200) {
      throw new ScrapeException(uri, "HTTP " + response.statusCode(), null);
    }
    return response.body();
  }

  /** A RegionServer's cache figures could not be read; the message names the URL and why. */
  public static final class ScrapeException extends IOException {
    private static final long serialVersionUID = 1L;
    private final URI uri;

    ScrapeException(URI uri, String why, Throwable cause) {
      super("scraping " + uri + ": " + why, cause);
      this.uri = uri;
    }

    public URI uri() {
      return uri;
    }
  }
}
