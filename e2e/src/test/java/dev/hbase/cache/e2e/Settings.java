package dev.hbase.cache.e2e;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The names the suite works with (kind cluster, namespaces, operator release, images), read from
 * e2e/kind/lib.sh, the one place they are defined, with this process's environment: e2e/e2e.sh
 * exports what the user overrode, so the suite, e2e.sh and the scripts it calls see the same
 * values. With E2E_SECURED=1 (make e2e-secured) the HBase is Kerberos-secured ({@link
 * #kerberosRealm}, lib.sh's KERBEROS_REALM; empty otherwise): e2e/kind/kdc-up.sh made the realm,
 * its keytab Secrets and the krb5 ConfigMaps before the suite.
 */
record Settings(
    Path repo,
    String kindCluster,
    String context,
    String hbaseNamespace,
    String hbaseImage,
    String operatorNamespace,
    String operatorRelease,
    String operatorImage,
    String kerberosRealm) {

  private static final List<String> NAMES =
      List.of(
          "KIND_CLUSTER",
          "KUBE_CONTEXT",
          "HBASE_NAMESPACE",
          "HBASE_IMAGE",
          "OPERATOR_NAMESPACE",
          "OPERATOR_RELEASE",
          "OPERATOR_IMAGE",
          "KERBEROS_REALM");

  /** The operator's identity on a secured HBase: its principal's name, and its keytab's Secret. */
  static final String OPERATOR_PRINCIPAL_NAME = "cache-operator";

  static final String OPERATOR_KEYTAB_SECRET = "hbase-cache-keytab";

  /** The e2e workload's identity on a secured HBase (an HBase superuser there). */
  static final String WORKLOAD_PRINCIPAL_NAME = "e2e-workload";

  static final String WORKLOAD_KEYTAB_SECRET = "e2e-workload-keytab";

  static Settings load(Path repo) {
    StringBuilder script = new StringBuilder(". e2e/kind/lib.sh");
    for (String n : NAMES) {
      script.append(" && echo \"").append(n).append("=$").append(n).append('"');
    }
    // E2E_SUITE=1: lib.sh's default cluster for the suite (hbase-cache-e2e), as e2e/e2e.sh gets it
    Shell.Result r =
        Shell.run(repo, 30, Map.of("E2E_SUITE", "1"), List.of("bash", "-c", script.toString()));
    if (r.code() != 0) {
      throw new IllegalStateException("reading e2e/kind/lib.sh failed: " + r.output());
    }
    Map<String, String> v = new LinkedHashMap<>();
    r.output()
        .lines()
        .filter(l -> l.contains("="))
        .forEach(l -> v.put(l.substring(0, l.indexOf('=')), l.substring(l.indexOf('=') + 1)));
    for (String n : NAMES) {
      if (v.getOrDefault(n, "").isEmpty()) {
        throw new IllegalStateException("e2e/kind/lib.sh gave no " + n + ": " + r.output());
      }
    }
    return new Settings(
        repo,
        v.get("KIND_CLUSTER"),
        v.get("KUBE_CONTEXT"),
        v.get("HBASE_NAMESPACE"),
        v.get("HBASE_IMAGE"),
        v.get("OPERATOR_NAMESPACE"),
        v.get("OPERATOR_RELEASE"),
        v.get("OPERATOR_IMAGE"),
        "1".equals(System.getenv("E2E_SECURED")) ? v.get("KERBEROS_REALM") : "");
  }

  /** Whether the HBase is Kerberos-secured (make e2e-secured). */
  boolean secured() {
    return !kerberosRealm.isEmpty();
  }

  String principal(String name) {
    return name + "@" + kerberosRealm;
  }

  /** The environment for the e2e/kind scripts the suite runs: exactly the values the suite uses. */
  Map<String, String> env() {
    return Map.of(
        "KIND_CLUSTER",
        kindCluster,
        "HBASE_NAMESPACE",
        hbaseNamespace,
        "HBASE_IMAGE",
        hbaseImage,
        "OPERATOR_NAMESPACE",
        operatorNamespace,
        "OPERATOR_RELEASE",
        operatorRelease,
        "OPERATOR_IMAGE",
        operatorImage,
        // the chart's ServiceMonitor, PodMonitor, PrometheusRule and dashboard, scraped every 10 s
        // by the suite's Prometheus
        "OPERATOR_MONITORING",
        "1",
        "OPERATOR_HELM_ARGS",
        "--set monitoring.interval=10s"
            // the realm's krb5.conf, made by e2e/kind/kdc-up.sh
            + (secured() ? " --set kerberos.krb5ConfigMap=krb5" : ""));
  }
}
