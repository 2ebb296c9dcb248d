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
 * Reads {@link CacheSample}s from RegionServer info ports (the {@code /jmx} servlet): over plain
 * HTTP, or on a secured cluster over HTTPS ({@code hbase.ssl.enabled}, the server's certificate
 * checked against a given CA, host name included) and with SPNEGO ({@code
 * hbase.security.authentication.ui=kerberos}: a Kerberos ticket for {@code HTTP/<host>}, asked as
 * the given {@link KerberosLogin}). With SPNEGO or TLS, {@code host} must be the name in the
 * server's certificate and principal, not an address.
 */
public final class JmxScraper {

  public static final int DEFAULT_INFO_PORT = 16030;

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http;
  private final Duration timeout;
  private final Clock clock;
  private final String scheme;

  /** SPNEGO as this identity (null: no Authorization header). */
  private final KerberosLogin spnego;

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
    this(http, timeout, clock, "http", null);
  }

  private JmxScraper(
      HttpClient http, Duration timeout, Clock clock, String scheme, KerberosLogin spnego) {
    this.http = http;
    this.timeout = timeout;
    this.clock = clock;
    this.scheme = scheme;
    this.spnego = spnego;
  }

  /**
   * A scraper for a secured cluster's info servers.
   *
   * @param trust the CA certificates (PEM) the servers' certificates must chain to; null: plain
   *     HTTP
   * @param spnego the identity to authenticate as with SPNEGO; null: none
   */
  public static JmxScraper secured(Duration timeout, String trust, KerberosLogin spnego)
      throws java.security.GeneralSecurityException {
    if (spnego != null && trust == null) {
      // a Negotiate token over plain HTTP can be replayed by whoever sees it
      throw new IllegalArgumentException("SPNEGO without TLS: give the CA of the info servers");
    }
    HttpClient.Builder b =
        HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NEVER);
    if (trust != null) {
      b.sslContext(sslContext(trust));
    }
    return new JmxScraper(
        b.build(), timeout, Clock.systemUTC(), trust == null ? "http" : "https", spnego);
  }

  /** An SSL context that trusts exactly the certificates of the PEM text. */
  static javax.net.ssl.SSLContext sslContext(String pem)
      throws java.security.GeneralSecurityException {
    var certs =
        java.security.cert.CertificateFactory.getInstance("X.509")
            .generateCertificates(
                new java.io.ByteArrayInputStream(
                    pem.getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    if (certs.isEmpty()) {
      throw new java.security.cert.CertificateException("no certificate in the CA text");
    }
    java.security.KeyStore store = java.security.KeyStore.getInstance("PKCS12");
    try {
      store.load(null, null);
    } catch (IOException e) {
      throw new java.security.KeyStoreException(e);
    }
    int i = 0;
    for (var c : certs) {
      store.setCertificateEntry("ca-" + i++, c);
    }
    var tmf =
        javax.net.ssl.TrustManagerFactory.getInstance(
            javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    var ctx = javax.net.ssl.SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
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
    return scrape(uriOf(host, infoPort, CacheSample.BEAN));
  }

  private URI uriOf(String host, int infoPort, String bean) {
    URI plain = uri(host, infoPort, bean);
    return "http".equals(scheme) ? plain : URI.create(scheme + plain.toString().substring(4));
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
    URI uri = uriOf(host, infoPort, JVM_BEAN);
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
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json").GET();
    if (spnego != null) {
      request.header("Authorization", "Negotiate " + negotiateToken(uri));
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      throw new ScrapeException(uri, "no answer within " + timeout.toMillis() + " ms", e);
    } catch (javax.net.ssl.SSLHandshakeException e) {
      throw new ScrapeException(
          uri, "TLS: the info server's certificate is not trusted (" + e.getMessage() + ")", e);
    } catch (IOException e) {
      throw new ScrapeException(uri, "cannot connect: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ScrapeException(uri, "interrupted", e);
    }
    if (response.statusCode() == 401) {
      throw new ScrapeException(
          uri,
          "HTTP 401: the info server wants SPNEGO"
              + (spnego == null
                  ? " (no Kerberos identity given)"
                  : " and refused " + spnego.principal()),
          null);
    }
    if (response.statusCode() != 200) {
      throw new ScrapeException(uri, "HTTP " + response.statusCode(), null);
    }
    return response.body();
  }

  /** The first SPNEGO token for {@code HTTP/<host>}, as {@link #spnego}. */
  private String negotiateToken(URI uri) throws ScrapeException {
    try {
      byte[] token =
          spnego.doAs(
              () -> {
                var gss = org.ietf.jgss.GSSManager.getInstance();
                var spnegoOid = new org.ietf.jgss.Oid("1.3.6.1.5.5.2");
                var server =
                    gss.createName(
                        "HTTP@" + uri.getHost(), org.ietf.jgss.GSSName.NT_HOSTBASED_SERVICE);
                var ctx =
                    gss.createContext(
                        server, spnegoOid, null, org.ietf.jgss.GSSContext.DEFAULT_LIFETIME);
                try {
                  ctx.requestMutualAuth(false);
                  ctx.requestCredDeleg(false);
                  return ctx.initSecContext(new byte[0], 0, 0);
                } finally {
                  ctx.dispose();
                }
              });
      return java.util.Base64.getEncoder().encodeToString(token);
    } catch (Exception e) {
      throw new ScrapeException(
          uri, "SPNEGO: no Kerberos ticket for HTTP/" + uri.getHost() + " (" + e + ")", e);
    }
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

    /**
     * The TLS handshake failed: the server's certificate does not chain to the trusted CA, or does
     * not carry the host name asked for.
     */
    public boolean untrusted() {
      return getCause() instanceof javax.net.ssl.SSLHandshakeException;
    }
  }
}
