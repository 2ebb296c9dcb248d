package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException;
import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException.Kind;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

/**
 * Reads a RegionServer's {@code /jmx} over HTTPS ({@code hbase.ssl.enabled}): it connects to the
 * address given (the pod's IP: no DNS answer chosen by whoever writes the Service decides where the
 * operator connects, and a pod not Ready, which has no DNS record, is reachable too) and accepts
 * the server only if its certificate chains to exactly the CA given and carries the name given (a
 * DNS subject alternative name, {@code *.} for one label). With SPNEGO ({@code
 * hbase.security.authentication.ui=kerberos}) it sends a Kerberos ticket for {@code HTTP/<name>}
 * asked as the given {@link KerberosLogin}, over TLS only. A failure says why ({@link Kind}): a
 * certificate not trusted or without the name, a server that does not speak TLS, SPNEGO refused.
 */
public final class TlsJmxScraper {
  private final javax.net.ssl.X509ExtendedTrustManager caTrust;
  private final KerberosLogin spnego;
  private final Duration timeout;
  private final Clock clock = Clock.systemUTC();

  TlsJmxScraper(Duration timeout, String trust, KerberosLogin spnego)
      throws GeneralSecurityException {
    if (trust == null) {
      // a Negotiate token over plain HTTP can be replayed by whoever sees it
      throw new IllegalArgumentException("no CA for the info servers' certificates");
    }
    this.caTrust = trustManager(trust);
    this.spnego = spnego;
    this.timeout = timeout;
  }

  /** {@link #scrape(String, String, int)} at the name itself. */
  public CacheSample scrape(String host, int infoPort) throws ScrapeException {
    return scrape(host, host, infoPort);
  }

  /** The server at {@code address} (an IP or a host name), which must prove it is {@code name}. */
  public CacheSample scrape(String address, String name, int infoPort) throws ScrapeException {
    URI uri = uri(address, infoPort, CacheSample.BEAN);
    return get(uri, name, JmxScraper.sample(uri, clock));
  }

  /** {@link JmxScraper#gcTimeMillis}, over HTTPS as {@link #scrape(String, String, int)}. */
  public long gcTimeMillis(String address, String name, int infoPort) throws ScrapeException {
    URI uri = uri(address, infoPort, JmxScraper.JVM_BEAN);
    return get(uri, name, JmxScraper::gcTimeMillis);
  }

  static URI uri(String address, int port, String bean) {
    URI plain = JmxScraper.uri(address, port, bean);
    return URI.create("https" + plain.toString().substring("http".length()));
  }

  private <T> T get(URI uri, String name, InfoGet.Reader<T> reader) throws ScrapeException {
    javax.net.ssl.SSLSocketFactory tls;
    try {
      tls = contextFor(name).getSocketFactory();
    } catch (GeneralSecurityException e) {
      throw new ScrapeException(uri, "TLS: " + e, e);
    }
    Map<String, String> headers =
        spnego == null
            ? Map.of()
            : Map.of("Authorization", "Negotiate " + negotiateToken(uri, name));
    InfoGet.Transport transport =
        new InfoGet.Transport() {
          @Override
          public java.net.Socket over(java.net.Socket tcp, URI u) throws IOException {
            // the handshake checks the name the server must prove (contextFor); no check of the
            // address against the certificate (none is set on the socket), which would refuse an IP
            // it does not name
            var s =
                (javax.net.ssl.SSLSocket) tls.createSocket(tcp, InfoGet.host(u), u.getPort(), true);
            s.startHandshake();
            return s;
          }

          @Override
          public ScrapeException handshakeFailed(URI u, IOException e) {
            return TlsJmxScraper.handshakeFailed(u, e);
          }
        };
    try {
      return InfoGet.get(uri, timeout, transport, headers, JmxScraper.reader(uri, reader));
    } catch (InfoGet.Status e) {
      int code = e.code;
      if (code == HttpURLConnection.HTTP_UNAUTHORIZED || code == HttpURLConnection.HTTP_FORBIDDEN) {
        throw new ScrapeException(
            uri,
            "HTTP "
                + code
                + (spnego == null
                    ? ": the info server wants SPNEGO (no Kerberos identity given: is"
                        + " hbase.security.authentication.ui=kerberos in the base hbase-site?)"
                    : ": the info server refused " + spnego.principal()),
            null,
            Kind.UNAUTHORIZED);
      }
      throw new ScrapeException(uri, e.getMessage(), null);
    }
  }

  /** Why the TLS handshake failed, as a {@link Kind}. */
  static ScrapeException handshakeFailed(URI uri, IOException e) {
    if (e instanceof SSLHandshakeException) {
      if (certificate(e)) {
        return new ScrapeException(
            uri,
            "TLS: the info server's certificate is not trusted (" + e.getMessage() + ")",
            e,
            Kind.UNTRUSTED);
      }
      // the link dropped mid-handshake (a server stopping): no sample only; anything else (no
      // common protocol or cipher, a client certificate demanded) is no TLS the operator speaks
      boolean dropped =
          e.getCause() instanceof java.io.EOFException
              || e.getCause() instanceof java.net.SocketException;
      return new ScrapeException(
          uri,
          "TLS handshake failed (" + e.getMessage() + ")",
          e,
          dropped ? Kind.OTHER : Kind.NOT_TLS);
    }
    if (e instanceof SSLException) {
      return new ScrapeException(
          uri, "TLS: the info server does not speak TLS (" + e.getMessage() + ")", e, Kind.NOT_TLS);
    }
    return new ScrapeException(uri, "cannot connect: " + e, e);
  }

  /** Whether the handshake failed on the certificate (its chain, its name), not on the link. */
  private static boolean certificate(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.security.cert.CertificateException
          || t instanceof java.security.cert.CertPathValidatorException
          || t instanceof java.security.cert.CertPathBuilderException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether the certificate names {@code name}: a DNS subject alternative name equal to it or a
   * {@code *.} wildcard for its first label (no common-name fallback), or an IP one equal to an IP
   * {@code name}.
   */
  static boolean carries(X509Certificate leaf, String name) {
    try {
      var names = leaf.getSubjectAlternativeNames();
      if (names == null) {
        return false;
      }
      String n = name.toLowerCase(Locale.ROOT);
      for (List<?> san : names) {
        int type = (Integer) san.get(0);
        String value = String.valueOf(san.get(1)).toLowerCase(Locale.ROOT);
        if (type == 2 && matches(value, n)) {
          return true;
        }
        if (type == 7 && value.equals(n)) {
          return true;
        }
      }
      return false;
    } catch (java.security.cert.CertificateParsingException e) {
      return false;
    }
  }

  static boolean matches(String pattern, String name) {
    if (!pattern.startsWith("*.")) {
      return pattern.equals(name);
    }
    int dot = name.indexOf('.');
    return dot > 0 && name.substring(dot + 1).equals(pattern.substring(2));
  }

  /** The trust manager of exactly the certificates of the PEM text (chains only, no names). */
  static javax.net.ssl.X509ExtendedTrustManager trustManager(String pem)
      throws GeneralSecurityException {
    var certs =
        java.security.cert.CertificateFactory.getInstance("X.509")
            .generateCertificates(
                new java.io.ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
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
    for (var cert : certs) {
      store.setCertificateEntry("ca-" + i++, cert);
    }
    var tmf =
        javax.net.ssl.TrustManagerFactory.getInstance(
            javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(store);
    for (var tm : tmf.getTrustManagers()) {
      if (tm instanceof javax.net.ssl.X509ExtendedTrustManager x) {
        return x;
      }
    }
    throw new GeneralSecurityException("no X.509 trust manager");
  }

  /**
   * A context for one connection: the server's chain must lead to the CA and its certificate must
   * carry {@code name} (checked in the handshake, so a refusal is a handshake failure with a
   * certificate cause, and nothing is sent to a server that fails it).
   */
  private SSLContext contextFor(String name) throws GeneralSecurityException {
    javax.net.ssl.X509ExtendedTrustManager ca = caTrust;
    var tm =
        new javax.net.ssl.X509ExtendedTrustManager() {
          /** After the CA's own trust manager checked the chain: the name. */
          private void named(X509Certificate[] chain)
              throws java.security.cert.CertificateException {
            if (chain.length == 0 || !carries(chain[0], name)) {
              throw new java.security.cert.CertificateException(
                  "the certificate does not carry the name " + name);
            }
          }

          @Override
          public void checkServerTrusted(X509Certificate[] chain, String authType)
              throws java.security.cert.CertificateException {
            ca.checkServerTrusted(chain, authType);
            named(chain);
          }

          // with the socket or engine: the session's algorithm constraints apply too (no endpoint
          // identification is set on them, so no check of the name against the IP)
          @Override
          public void checkServerTrusted(
              X509Certificate[] chain, String authType, java.net.Socket socket)
              throws java.security.cert.CertificateException {
            ca.checkServerTrusted(chain, authType, socket);
            named(chain);
          }

          @Override
          public void checkServerTrusted(
              X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
              throws java.security.cert.CertificateException {
            ca.checkServerTrusted(chain, authType, engine);
            named(chain);
          }

          @Override
          public void checkClientTrusted(X509Certificate[] chain, String authType)
              throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("a client, not a server");
          }

          @Override
          public void checkClientTrusted(
              X509Certificate[] chain, String authType, java.net.Socket socket)
              throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("a client, not a server");
          }

          @Override
          public void checkClientTrusted(
              X509Certificate[] chain, String authType, javax.net.ssl.SSLEngine engine)
              throws java.security.cert.CertificateException {
            throw new java.security.cert.CertificateException("a client, not a server");
          }

          @Override
          public X509Certificate[] getAcceptedIssuers() {
            return ca.getAcceptedIssuers();
          }
        };
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, new javax.net.ssl.TrustManager[] {tm}, null);
    return ctx;
  }

  /** The first SPNEGO token for {@code HTTP/<name>}, as {@link #spnego}. */
  private String negotiateToken(URI uri, String name) throws ScrapeException {
    try {
      byte[] token =
          spnego.doAs(
              () -> {
                var gss = org.ietf.jgss.GSSManager.getInstance();
                var spnegoOid = new org.ietf.jgss.Oid("1.3.6.1.5.5.2");
                var server =
                    gss.createName("HTTP@" + name, org.ietf.jgss.GSSName.NT_HOSTBASED_SERVICE);
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
      // no such principal is the cluster's to fix; a KDC away or a clock skew passes
      boolean unknown = String.valueOf(e).contains("not found in Kerberos database");
      throw new ScrapeException(
          uri,
          "SPNEGO: no Kerberos ticket for HTTP/" + name + " (" + e + ")",
          e,
          unknown ? Kind.UNAUTHORIZED : Kind.OTHER);
    }
  }
}
