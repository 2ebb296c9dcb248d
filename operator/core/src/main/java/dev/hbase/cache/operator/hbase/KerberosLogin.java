package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import javax.security.auth.kerberos.KerberosTicket;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kerberos identity the operator acts as towards one secured HBase cluster: a principal logged
 * in from its keytab, kept fresh. Every connection to that cluster is made as this identity ({@link
 * AdminHBaseCluster#connect(java.util.Map, AdminHBaseCluster.Options, KerberosLogin)}), never as
 * the process's login user, so two clusters with different principals never share credentials.
 *
 * <p>Fresh: once every ticket it holds has expired, a new connection (HBase closes idle ones after
 * seconds) fails its SASL handshake with "Failed to find any Kerberos tgt". HBase's connection has
 * a chore that asks Hadoop to log in again every 30 s, but Hadoop refuses a login less than 60 s
 * after the last by default, so a ticket shorter than about a minute and a half runs out first
 * (SecuredClusterIT's 30 s ticket does, without this class's timer). So a timer asks every {@link
 * #RELOGIN_CHECK}, also for an identity with no open connection ({@code
 * checkTGTAndReloginFromKeytab}: past 80% of the ticket's lifetime), with Hadoop's floor lowered to
 * 5 s.
 *
 * <p>Hadoop's security mode is process-wide: the first login switches {@link UserGroupInformation}
 * to Kerberos. Connections to unsecured clusters are unaffected: HBase chooses SIMPLE or KERBEROS
 * from each connection's own {@code hbase.security.authentication}.
 */
public final class KerberosLogin implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KerberosLogin.class);

  /** How often each login's ticket is checked (one thread for all logins). */
  static final Duration RELOGIN_CHECK = Duration.ofSeconds(5);

  private static final ScheduledExecutorService TIMER =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kerberos-relogin");
            t.setDaemon(true);
            return t;
          });

  private final String principal;
  private final Path keytab;
  private final UserGroupInformation ugi;
  private final User user;
  private final ScheduledFuture<?> relogins;

  private static final java.util.concurrent.atomic.AtomicLong SERIALS =
      new java.util.concurrent.atomic.AtomicLong();
  private final long serial = SERIALS.incrementAndGet();

  private KerberosLogin(String principal, Path keytab, UserGroupInformation ugi) {
    this.principal = principal;
    this.keytab = keytab;
    this.ugi = ugi;
    this.user = User.create(ugi);
    this.relogins =
        TIMER.scheduleWithFixedDelay(
            this::reloginIfDue,
            RELOGIN_CHECK.toMillis(),
            RELOGIN_CHECK.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  /**
   * Logs {@code principal} in from the keytab file.
   *
   * @throws HBaseClusterException.LoginFailed when the keytab is missing or unreadable, holds no
   *     key for the principal, or the KDC refuses the login; the message says which
   */
  public static KerberosLogin fromKeytab(String principal, Path keytab)
      throws HBaseClusterException.LoginFailed {
    Objects.requireNonNull(principal, "principal");
    if (keytab == null || !Files.isReadable(keytab)) {
      throw new HBaseClusterException.LoginFailed(
          "Kerberos login of " + principal + " failed: no readable keytab at " + keytab, null);
    }
    try {
      kerberosMode();
      UserGroupInformation ugi =
          UserGroupInformation.loginUserFromKeytabAndReturnUGI(principal, keytab.toString());
      LOG.info("Kerberos login of {} from {}", principal, keytab);
      return new KerberosLogin(principal, keytab, ugi);
    } catch (IOException | RuntimeException e) {
      // the message goes into the policy's status and events: no keytab path (it names the
      // keytab's digest), the full error in the operator's log
      LOG.warn("Kerberos login of {} from {} failed", principal, keytab, e);
      throw new HBaseClusterException.LoginFailed(
          "Kerberos login of "
              + principal
              + " from its keytab failed: "
              + rootMessage(e).replace(keytab.toString(), "the keytab"),
          e);
    }
  }

  /** Switches Hadoop's security mode to Kerberos once (it is process-wide). */
  private static synchronized void kerberosMode() {
    if (!UserGroupInformation.isSecurityEnabled()) {
      Configuration conf = new Configuration(false);
      conf.set("hadoop.security.authentication", "kerberos");
      // Hadoop's floor between two logins of one identity (60 s by default): a ticket that ran
      // out is replaced at the next check, not up to a minute later
      conf.setInt("hadoop.kerberos.min.seconds.before.relogin", 5);
      // principals of any realm map to their first component (Hadoop's DEFAULT rule maps only
      // the default realm's, and refuses the others at login)
      conf.set("hadoop.security.auth_to_local", "RULE:[1:$1] RULE:[2:$1] DEFAULT");
      UserGroupInformation.setConfiguration(conf);
    }
  }

  /** HBase's user for {@code ConnectionFactory.createConnection(conf, user)}. */
  public User user() {
    return user;
  }

  /** Runs {@code action} as this identity (its Kerberos credentials in the access context). */
  public <T> T doAs(java.security.PrivilegedExceptionAction<T> action)
      throws IOException, InterruptedException {
    return ugi.doAs(action);
  }

  /**
   * Tells logins apart: the principal, its keytab file and this login's serial. Two logins from the
   * same keytab (two namespaces' Secrets, or a Secret rotated back to a keytab it had before) are
   * two identities: connections made as one are never handed to the other, and dropping one closes
   * only its own ({@code HBaseClusters.closeAll}).
   */
  public String id() {
    return principal + "|" + keytab + "|#" + serial;
  }

  public String principal() {
    return principal;
  }

  /** When the current ticket-granting ticket ends (empty if none is held). */
  public Optional<Instant> ticketEnd() {
    return ticketEndOf(ugi);
  }

  private static Optional<Instant> ticketEndOf(UserGroupInformation ugi) {
    try {
      java.lang.reflect.Method m = UserGroupInformation.class.getDeclaredMethod("getSubject");
      m.setAccessible(true);
      javax.security.auth.Subject s = (javax.security.auth.Subject) m.invoke(ugi);
      return s.getPrivateCredentials(KerberosTicket.class).stream()
          .filter(t -> t.getServer().getName().startsWith("krbtgt/"))
          .map(t -> t.getEndTime().toInstant())
          .max(Instant::compareTo);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Logs in again from the keytab when the ticket is near its end or gone. */
  void reloginIfDue() {
    try {
      Optional<Instant> before = ticketEnd();
      ugi.checkTGTAndReloginFromKeytab();
      Optional<Instant> after = ticketEnd();
      if (!after.equals(before)) {
        LOG.info(
            "Kerberos re-login of {} from {}: ticket valid until {}",
            principal,
            keytab,
            after.map(Instant::toString).orElse("?"));
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Kerberos re-login of {} from {} failed: {}", principal, keytab, rootMessage(e));
    }
  }

  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
  }

  /** Stops the re-logins. */
  @Override
  public void close() {
    relogins.cancel(false);
  }

  @Override
  public String toString() {
    return principal + " (keytab " + keytab + ")";
  }
}
