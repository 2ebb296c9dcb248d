package dev.hbase.cache.operator.hbase;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Self-signed certificates for the TLS tests, made with the JDK's keytool. */
public final class TestCertificates {
  public static final String PASSWORD = "changeit";

  private TestCertificates() {}

  /** A PKCS12 store with a self-signed key and certificate for the subject alternative names. */
  public static Path selfSigned(Path dir, String alias, String san) throws Exception {
    Path store = dir.resolve(alias + ".p12");
    keytool(
        "-genkeypair",
        "-alias",
        alias,
        "-keyalg",
        "RSA",
        "-keysize",
        "2048",
        "-dname",
        "CN=" + alias,
        "-ext",
        "SAN=" + san,
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        store.toString(),
        "-storepass",
        PASSWORD,
        "-keypass",
        PASSWORD);
    return store;
  }

  public static String exportPem(Path dir, Path store, String alias) throws Exception {
    Path pem = dir.resolve(alias + ".pem");
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        alias,
        "-keystore",
        store.toString(),
        "-storepass",
        PASSWORD,
        "-file",
        pem.toString());
    return Files.readString(pem);
  }

  static void keytool(String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException("keytool " + String.join(" ", args) + ": " + out);
    }
  }
}
