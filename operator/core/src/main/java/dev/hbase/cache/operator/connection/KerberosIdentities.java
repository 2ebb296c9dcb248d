package dev.hbase.cache.operator.connection;

import dev.hbase.cache.operator.hbase.HBaseClusterException;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Kerberos logins of the operator, one per principal and keytab content. Hadoop logs in from a
 * keytab file, so each keytab read from a Secret is written to a directory only the operator's user
 * can read ({@code 0700}, files {@code 0600}), named by the SHA-256 of its content: a Secret
 * rotated to a new keytab gives a new login (and a new connection, {@link HBaseClusters}); the same
 * keytab read again reuses the login.
 */
public final class KerberosIdentities implements AutoCloseable {
  /** The keytabs' directory: a new private one under java.io.tmpdir, made at the first login. */
  private Path dir;

  private final Map<String, KerberosLogin> logins = new ConcurrentHashMap<>();

  /** The login of {@code principal} with this keytab, made on first use. */
  public KerberosLogin login(String principal, byte[] keytab)
      throws HBaseClusterException.LoginFailed {
    String digest = sha256(keytab);
    String key = principal + "|" + digest;
    KerberosLogin known = logins.get(key);
    if (known != null) {
      return known;
    }
    synchronized (this) {
      known = logins.get(key);
      if (known != null) {
        return known;
      }
      Path file;
      try {
        if (dir == null) {
          dir =
              Files.createTempDirectory(
                  "hbase-cache-keytabs-",
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rwx------")));
        }
        file = dir.resolve("keytab-" + digest);
        if (!Files.exists(file)) {
          Path tmp =
              Files.createTempFile(
                  dir,
                  "keytab-",
                  ".tmp",
                  PosixFilePermissions.asFileAttribute(
                      PosixFilePermissions.fromString("rw-------")));
          Files.write(tmp, keytab);
          Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
      } catch (IOException e) {
        throw new HBaseClusterException.LoginFailed(
            "Kerberos login of " + principal + ": cannot write its keytab to " + dir + ": " + e, e);
      }
      KerberosLogin login = KerberosLogin.fromKeytab(principal, file);
      logins.put(key, login);
      return login;
    }
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    logins.values().forEach(KerberosLogin::close);
    logins.clear();
  }
}
