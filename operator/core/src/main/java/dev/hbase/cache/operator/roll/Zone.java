package dev.hbase.cache.operator.roll;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The policy's namespace in the cluster's DNS: {@code <namespace>.svc.<clusterDomain>}, where each
 * of its pods is {@code <pod>.<serviceName>.<namespace>.svc.<clusterDomain>}. What tells the
 * operator that a RegionServer belongs to the policy's namespace ({@link OwnCluster}).
 *
 * @param namespace the policy's namespace
 * @param clusterDomain the cluster's DNS domain (the chart's clusterDomain, {@code cluster.local})
 */
public record Zone(String namespace, String clusterDomain) {

  public Zone {
    namespace = normal(namespace);
    clusterDomain = normal(clusterDomain);
  }

  /** A DNS label (RFC 1123): a namespace, a service, a StatefulSet pod's name. */
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** The pod's DNS name, lower case; null when {@code service} is no DNS label (or unset). */
  public String podName(String pod, String service) {
    if (pod == null || service == null) {
      return null;
    }
    String p = pod.toLowerCase(Locale.ROOT);
    String s = service.toLowerCase(Locale.ROOT);
    if (!LABEL.matcher(p).matches() || !LABEL.matcher(s).matches()) {
      return null;
    }
    return p + "." + s + "." + namespace + ".svc." + clusterDomain;
  }

  /**
   * Whether {@code host} names a pod of this namespace: {@code <pod>.<service>.<namespace>.svc},
   * with or without {@code .<clusterDomain>} and a trailing dot (a pod of any StatefulSet of the
   * namespace, the policy's target or not).
   */
  public boolean holds(String host) {
    if (host == null) {
      return false;
    }
    String h = normal(host);
    String shortSuffix = "." + namespace + ".svc";
    String longSuffix = shortSuffix + "." + clusterDomain;
    String head =
        h.endsWith(longSuffix)
            ? h.substring(0, h.length() - longSuffix.length())
            : h.endsWith(shortSuffix) ? h.substring(0, h.length() - shortSuffix.length()) : null;
    if (head == null) {
      return false;
    }
    String[] labels = head.split("\\.", -1);
    return labels.length == 2
        && LABEL.matcher(labels[0]).matches()
        && LABEL.matcher(labels[1]).matches();
  }

  /** A host as DNS compares it: lower case, without the trailing dot of an absolute name. */
  static String normal(String host) {
    String h = host.strip().toLowerCase(Locale.ROOT);
    return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
  }

  /** {@code <pod>.<service>.<namespace>.svc}: the first four labels of a pod's DNS name. */
  static String withoutClusterDomain(String fqdn) {
    int dot = -1;
    for (int i = 0; i < 4; i++) {
      dot = fqdn.indexOf('.', dot + 1);
      if (dot < 0) {
        return fqdn;
      }
    }
    return fqdn.substring(0, dot);
  }
}
