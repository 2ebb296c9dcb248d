package dev.hbase.cache.operator.hbase;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@link CacheSample}s from RegionServer info ports (the {@code /jmx} servlet) over plain
 * HTTP; {@link #secured} gives the HTTPS one ({@link TlsJmxScraper}: the server's certificate
 * checked against a given CA and name, SPNEGO as a {@link KerberosLogin}). Both ask through {@link
 * InfoGet}: each read and the connect within the timeout, the whole exchange within {@value
 * InfoGet#DEADLINE_FACTOR} x the timeout, at most {@value InfoGet#MAX_BODY} bytes read and only the
 * bean's figures kept ({@link JmxBeans}).
 */
public final class JmxScraper {

  public static final int DEFAULT_INFO_PORT = 16030;

  private final Duration timeout;
  private final Clock clock;

  public JmxScraper(Duration timeout) {
    this(timeout, Clock.systemUTC());
  }

  public JmxScraper(Duration timeout, Clock clock) {
    this.timeout = timeout;
    this.clock = clock;
  }

  /** The deadline of one whole exchange with an info server ({@link InfoGet}). */
  public static Duration deadline(Duration timeout) {
    return timeout.multipliedBy(InfoGet.DEADLINE_FACTOR);
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
    return get(uri, sample(uri, clock));
  }

  /** What reads a cache sample from an answer's body. */
  static InfoGet.Reader<CacheSample> sample(URI uri, Clock clock) {
    return body -> {
      Instant at = clock.instant();
      return CacheSample.fromJmx(body, at);
    };
  }

  /** The bean with the RegionServer JVM's garbage collection time. */
  public static final String JVM_BEAN = "Hadoop:service=HBase,name=JvmMetrics";

  /**
   * Milliseconds the RegionServer's JVM spent in garbage collection since it started ({@code
   * GcTimeMillis} of {@value #JVM_BEAN}): a second, small request, made only for sizing advice.
   */
  public long gcTimeMillis(String host, int infoPort) throws ScrapeException {
    URI uri = uri(host, infoPort, JVM_BEAN);
    return get(uri, JmxScraper::gcTimeMillis);
  }

  /** {@code GcTimeMillis} from an answer's body. */
  static long gcTimeMillis(java.io.InputStream body) throws IOException {
    JsonNode gc = JmxBeans.find(body, JVM_BEAN, Set.of("GcTimeMillis")).path("GcTimeMillis");
    if (!gc.isNumber()) {
      throw new IOException("no GcTimeMillis in " + JVM_BEAN);
    }
    return gc.asLong();
  }

  private <T> T get(URI uri, InfoGet.Reader<T> reader) throws ScrapeException {
    try {
      return InfoGet.get(uri, timeout, InfoGet.Transport.PLAIN, Map.of(), reader(uri, reader));
    } catch (InfoGet.Status e) {
      throw new ScrapeException(uri, e.getMessage(), null);
    }
  }

  /** {@code reader}, its failures (not JSON, no such bean) as the scrape's. */
  static <T> InfoGet.Reader<T> reader(URI uri, InfoGet.Reader<T> reader) {
    return body -> {
      try {
        return reader.read(body);
      } catch (InfoGet.TooLarge | ScrapeException e) {
        throw e;
      } catch (java.net.SocketException | java.net.SocketTimeoutException e) {
        throw e; // the link, not the answer: InfoGet tells it
      } catch (IOException e) {
        throw new ScrapeException(uri, e.getMessage(), e);
      }
    };
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
      /**
       * No whole answer in time: no connection or no byte within the timeout, or the exchange past
       * its deadline (a server that trickles its answer).
       */
      STALLED,
      /** The answer is larger than the operator reads ({@value InfoGet#MAX_BODY} bytes). */
      TOO_LARGE,
      /** Anything else: a refused connection, not a RegionServer. */
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

    /** The server holds the scrape ({@link Kind#STALLED}) or floods it ({@link Kind#TOO_LARGE}). */
    public boolean stalled() {
      return kind == Kind.STALLED || kind == Kind.TOO_LARGE;
    }

    /** {@link Kind#UNTRUSTED}. */
    public boolean untrusted() {
      return kind == Kind.UNTRUSTED;
    }
  }
}
