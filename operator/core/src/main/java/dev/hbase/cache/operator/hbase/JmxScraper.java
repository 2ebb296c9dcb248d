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

/**
 * Reads {@link CacheSample}s from RegionServer info ports (the {@code /jmx} servlet) over plain
 * HTTP; {@link #secured} gives the HTTPS one ({@link TlsJmxScraper}: the server's certificate
 * checked against a given CA and name, SPNEGO as a {@link KerberosLogin}).
 */
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

  /**
   * A scraper for a secured cluster's info servers: HTTPS trusting exactly the certificates of
   * {@code trust} (PEM), with SPNEGO as {@code spnego} (null: none).
   */
  public static TlsJmxScraper secured(Duration timeout, String trust, KerberosLogin spnego)
      throws java.security.GeneralSecurityException {
    return new TlsJmxScraper(timeout, trust, spnego);
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
    return scrape(uri(host, infoPort, CacheSample.BEAN));
  }

  public CacheSample scrape(URI uri) throws ScrapeException {
    return sample(uri, get(uri), clock);
  }

  static CacheSample sample(URI uri, String body, Clock clock) throws ScrapeException {
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
    return gcTimeMillis(uri, get(uri));
  }

  static long gcTimeMillis(URI uri, String body) throws ScrapeException {
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

    /** Why, where it matters to the caller. */
    public enum Kind {
      /** The certificate does not chain to the trusted CA, or does not carry the name asked. */
      UNTRUSTED,
      /** The server does not speak TLS (plain HTTP on an HTTPS port, say). */
      NOT_TLS,
      /** SPNEGO: no ticket for the server's principal, or the server answered 401. */
      UNAUTHORIZED,
      /** Anything else: no answer, refused connection, not a RegionServer. */
      OTHER
    }

    private final URI uri;
    private final Kind kind;

    ScrapeException(URI uri, String why, Throwable cause) {
      this(uri, why, cause, Kind.OTHER);
    }

    ScrapeException(URI uri, String why, Throwable cause, Kind kind) {
      super("scraping " + uri + ": " + why, cause);
      this.uri = uri;
      this.kind = kind;
    }

    public URI uri() {
      return uri;
    }

    public Kind kind() {
      return kind;
    }

    /** {@link Kind#UNTRUSTED}. */
    public boolean untrusted() {
      return kind == Kind.UNTRUSTED;
    }
  }
}
