package dev.hbase.cache.operator.hbase;

/** An HBase admin call failed or could not be made; the message says which and why. */
public class HBaseClusterException extends Exception {
  private static final long serialVersionUID = 1L;

  public HBaseClusterException(String message, Throwable cause) {
    super(message, cause);
  }

  public HBaseClusterException(String message) {
    super(message);
  }

  /**
   * The RegionServer instance the call needs has not registered with the master, or has not sent
   * its first load report yet: try again in a few seconds.
   */
  public static final class NotReady extends HBaseClusterException {
    private static final long serialVersionUID = 1L;

    public NotReady(String message) {
      super(message);
    }
  }

  /**
   * The operator could not log in to the cluster's Kerberos realm (no readable keytab, no key for
   * the principal in it, the KDC refused or could not be reached): nothing was sent to HBase.
   */
  public static final class LoginFailed extends HBaseClusterException {
    private static final long serialVersionUID = 1L;

    public LoginFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * HBase refused the call: the identity the operator acts as lacks a permission (the drain, the
   * reload and the balancer switch need ADMIN).
   */
  public static final class AccessDenied extends HBaseClusterException {
    private static final long serialVersionUID = 1L;

    public AccessDenied(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
