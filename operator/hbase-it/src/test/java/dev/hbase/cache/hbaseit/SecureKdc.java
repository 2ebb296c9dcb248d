package dev.hbase.cache.hbaseit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.hadoop.minikdc.MiniKdc;

/**
 * A real KDC for a secured {@link LocalHBase}: Hadoop's MiniKdc (Apache Kerby) in the test JVM, on
 * a free loopback port, realm {@code EXAMPLE.COM}. It writes the keytabs:
 *
 * <ul>
 *   <li>{@link #serviceKeytab}: the servers' principals {@code hbase/localhost}, {@code
 *       zookeeper/localhost} and {@code HTTP/localhost};
 *   <li>{@link #operatorKeytab}: {@link #OPERATOR}, the identity the operator acts as (an HBase
 *       superuser of the secured cluster, as the README tells a user to grant ADMIN);
 *   <li>{@link #readerKeytab}: {@link #READER}, a user without ADMIN.
 * </ul>
 *
 * The info servers serve HTTPS with a self-signed certificate for {@code localhost} ({@link
 * #caPem}) and require SPNEGO. The servers' principals name a fixed host ({@code localhost}), not
 * {@code _HOST}: the RegionServers of {@link LocalHBase} listen on several loopback addresses, and
 * Kerberos needs the name the client asks a ticket for to be the name the server logged in as.
 */
final class SecureKdc implements AutoCloseable {
  static final String OPERATOR = "cache-operator";
  static final String READER = "team-reader";
  static final String TEAM_ADMIN = "team-admin";
  static final String SERVICE_HOST = "localhost";

  final MiniKdc kdc;
  final Path dir;
  final Path serviceKeytab;
  final Path operatorKeytab;
  final Path readerKeytab;
  final Path teamAdminKeytab;

  /** MiniKdc's krb5.conf, for the daemons (this JVM reads a copy, see {@link #start}). */
  final Path krb5Conf;

  /** The info servers' key and certificate (PKCS12), self-signed for localhost and 127.0.0.1. */
  final Path keystore;

  /** That certificate in PEM: the CA a client must trust. */
  final Path caPem;

  static final String STORE_PASSWORD = "changeit";

  /** Whether the info servers serve HTTPS with SPNEGO ({@link #withPlainInfoServers}: not). */
  private boolean infoTls = true;

  private SecureKdc(MiniKdc kdc, Path dir) throws Exception {
    this.kdc = kdc;
    this.dir = dir;
    this.krb5Conf = kdc.getKrb5conf().toPath().toAbsolutePath();
    this.serviceKeytab = dir.resolve("service.keytab");
    this.operatorKeytab = dir.resolve("operator.keytab");
    this.readerKeytab = dir.resolve("reader.keytab");
    this.teamAdminKeytab = dir.resolve("team-admin.keytab");
    this.keystore = dir.resolve("info-server.p12");
    this.caPem = dir.resolve("ca.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "info",
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-dname",
        "CN=" + SERVICE_HOST,
        "-ext",
        "SAN=dns:" + SERVICE_HOST + ",ip:127.0.0.1",
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        keystore.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-keypass",
        STORE_PASSWORD);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "info",
        "-keystore",
        keystore.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-file",
        caPem.toString());
    kdc.createPrincipal(
        serviceKeytab.toFile(),
        "hbase/" + SERVICE_HOST,
        "zookeeper/" + SERVICE_HOST,
        "HTTP/" + SERVICE_HOST);
    kdc.createPrincipal(operatorKeytab.toFile(), OPERATOR);
    kdc.createPrincipal(readerKeytab.toFile(), READER);
    kdc.createPrincipal(teamAdminKeytab.toFile(), TEAM_ADMIN);
  }

  /**
   * Starts the KDC in {@code dir}. {@code clientTicketLifetime}: the lifetime this JVM's clients
   * ask for (krb5.conf {@code ticket_lifetime}, this JVM only), so a test can outlive a ticket; the
   * servers keep the KDC's default of a day.
   */
  static SecureKdc start(Path dir, Duration clientTicketLifetime) throws Exception {
    Files.createDirectories(dir);
    Properties conf = MiniKdc.createConf();
    conf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "127.0.0.1");
    MiniKdc kdc = new MiniKdc(conf, dir.toFile());
    kdc.start();
    SecureKdc k = new SecureKdc(kdc, dir);
    // MiniKdc pointed java.security.krb5.conf at its file; this JVM reads a copy that asks for the
    // short lifetime (read on the JVM's first Kerberos use, which comes after this)
    Path clientConf = dir.resolve("krb5-client.conf");
    Files.writeString(
        clientConf,
        Files.readString(k.krb5Conf)
            .replace(
                "[libdefaults]",
                "[libdefaults]\n    ticket_lifetime = " + clientTicketLifetime.toSeconds()));
    System.setProperty(MiniKdc.JAVA_SECURITY_KRB5_CONF, clientConf.toString());
    return k;
  }

  /** Runs the JDK's keytool; fails with its output. */
  static void keytool(String... args) throws Exception {
    java.util.List<String> cmd = new java.util.ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(java.util.List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + out);
    }
  }

  /**
   * Info servers over plain HTTP without SPNEGO: Kerberos on RPC and ZooKeeper only (a policy
   * without {@code spec.hbase.tls} reads /jmx so; with it, over HTTPS and SPNEGO as by default
   * here).
   */
  SecureKdc withPlainInfoServers() {
    infoTls = false;
    return this;
  }

  String realm() {
    return kdc.getRealm();
  }

  String principal(String name) {
    return name + "@" + realm();
  }

  String servicePrincipal(String service) {
    return service + "/" + SERVICE_HOST + "@" + realm();
  }

  /** hbase-site keys every daemon of the secured cluster gets. */
  Map<String, String> serverSite() {
    Map<String, String> s = new LinkedHashMap<>(clientSite());
    String hbase = servicePrincipal("hbase");
    String keytab = serviceKeytab.toString();
    s.put("hbase.security.authorization", "true");
    s.put(
        "hbase.coprocessor.master.classes",
        "org.apache.hadoop.hbase.security.access.AccessController");
    s.put(
        "hbase.coprocessor.region.classes",
        "org.apache.hadoop.hbase.security.token.TokenProvider,"
            + "org.apache.hadoop.hbase.security.access.AccessController");
    s.put(
        "hbase.coprocessor.regionserver.classes",
        "org.apache.hadoop.hbase.security.access.AccessController");
    s.put("hbase.superuser", OPERATOR);
    s.put("hbase.master.keytab.file", keytab);
    s.put("hbase.regionserver.keytab.file", keytab);
    // ZooKeeper: SASL from the servers, ACLs on HBase's znodes
    s.put(
        "hbase.zookeeper.property.authProvider.1",
        "org.apache.zookeeper.server.auth.SASLAuthenticationProvider");
    s.put("hbase.zookeeper.property.kerberos.removeHostFromPrincipal", "true");
    s.put("hbase.zookeeper.property.kerberos.removeRealmFromPrincipal", "true");
    s.put("hbase.zookeeper.server.keytab.file", keytab);
    s.put("hbase.zookeeper.server.kerberos.principal", servicePrincipal("zookeeper"));
    s.put("hbase.zookeeper.client.keytab.file", keytab);
    s.put("hbase.zookeeper.client.kerberos.principal", hbase);
    if (!infoTls) {
      return s;
    }
    // info servers: HTTPS with the self-signed certificate, SPNEGO as HTTP/localhost
    s.put("hbase.ssl.enabled", "true");
    s.put("ssl.server.keystore.location", keystore.toString());
    s.put("ssl.server.keystore.type", "pkcs12");
    s.put("ssl.server.keystore.password", STORE_PASSWORD);
    s.put("ssl.server.keystore.keypassword", STORE_PASSWORD);
    s.put("hbase.security.authentication.ui", "kerberos");
    s.put("hbase.security.authentication.spnego.kerberos.principal", servicePrincipal("HTTP"));
    s.put("hbase.security.authentication.spnego.kerberos.keytab", keytab);
    return s;
  }

  /** The client's keys: what the base hbase-site of a secured cluster tells the operator. */
  Map<String, String> clientSite() {
    Map<String, String> s = new LinkedHashMap<>();
    String hbase = servicePrincipal("hbase");
    s.put("hbase.security.authentication", "kerberos");
    s.put("hadoop.security.authentication", "kerberos");
    s.put("hbase.rpc.protection", "privacy");
    s.put("hbase.master.kerberos.principal", hbase);
    s.put("hbase.regionserver.kerberos.principal", hbase);
    return s;
  }

  /** JVM options for every daemon: the KDC's krb5.conf. */
  String jvmOpts() {
    return "-Djava.security.krb5.conf=" + krb5Conf;
  }

  @Override
  public void close() {
    kdc.stop();
  }
}
