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
 * The Kerberos logins of the operator, one per keytab Secret ({@code namespace/name}). Hadoop logs
 * in from a keytab file, so the keytab read from a Secret is written to a directory only the
 * operator's user can read ({@code 0700}, files {@code 0600}), named by the SHA-256 of its content.
 * The same keytab and principal read again reuse the login; a Secret rotated to another keytab or
 * principal replaces it, and a Secret gone or no longer allowed drops it ({@link #forget}): the
 * connections made as the old login are closed ({@code dropped}), then it stops renewing and its
 * file is deleted.
 */
public final class KerberosIdentities implements AutoCloseable {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(KerberosIdentities.class);

  /** Told of each login dropped, before it stops renewing: its connections go. */
  private final java.util.function.Consumer<KerberosLogin> dropped;

  public KerberosIdentities() {
    this(x -> {});
  }

  /**
   * @param dropped told of each login that is dropped or replaced ({@link
   *     HBaseClusters#closeAll(KerberosLogin)}: no connection outlives its login)
   */
  public KerberosIdentities(java.util.function.Consumer<KerberosLogin> dropped) {
    this.dropped = dropped;
  }

  /** The keytabs' directory: a new private one under java.io.tmpdir, made at the first login. */
  private Path dir;

  /** A login and what it was made from. */
  private record Held(String principal, String digest, Path file, KerberosLogin login) {}

  private final Map<String, Held> logins = new ConcurrentHashMap<>();

  /**
   * The login of {@code principal} with this keytab from the Secret {@code owner}, made on first
   * use; one made from another keytab or principal of that Secret is dropped.
   */
  public KerberosLogin login(String owner, String principal, byte[] keytab)
      throws HBaseClusterException.LoginFailed {
    String digest = sha256(keytab);
    Held known = logins.get(owner);
    if (known != null && known.principal().equals(principal) && known.digest().equals(digest)) {
      return known.login();
    }
    synchronized (this) {
      known = logins.get(owner);
      if (known != null && known.principal().equals(principal) && known.digest().equals(digest)) {
        return known.login();
      }
      forget(owner);
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
        // the file's name carries the keytab's digest: the message goes to the status, e to the log
        LOG.warn("cannot write the keytab of {} to {}", principal, dir, e);
        throw new HBaseClusterException.LoginFailed(
            "Kerberos login of " + principal + ": cannot write its keytab to the operator's /tmp",
            e);
      }
      KerberosLogin login;
      try {
        login = KerberosLogin.fromKeytab(principal, file);
      } catch (HBaseClusterException.LoginFailed e) {
        deleteUnused(file);
        throw e;
      }
      logins.put(owner, new Held(principal, digest, file, login));
      return login;
    }
  }

  /** Drops the login made from the Secret {@code owner}, if any: no more renewals, file deleted. */
  public synchronized void forget(String owner) {
    Held old = logins.remove(owner);
    if (old != null) {
      try {
        dropped.accept(old.login());
      } catch (RuntimeException e) {
        LOG.warn("closing the connections of {}: {}", old.principal(), e.toString());
      }
      old.login().close();
      deleteUnused(old.file());
    }
  }

  /** Deletes a keytab file no login holds (two Secrets with the same keytab share one file). */
  private void deleteUnused(Path file) {
    if (logins.values().stream().anyMatch(h -> h.file().equals(file))) {
      return;
    }
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // the directory is private and goes with the pod
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
    java.util.List.copyOf(logins.keySet()).forEach(this::forget);
  }
}
