package dev.hbase.cache.e2e;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The in-cluster HBase client of e2e/workload (Workload.java, compiled by e2e/workload/build.sh):
 * pods of the HBase image that load a table or read it, and the parsing of the reader's per-second
 * log lines ({@code R epochMillis ok=N fail=M ... h=bucket:count,...}).
 */
final class Workload {
  static final String JAR_CM = "e2e-workload-jar";
  private final KubernetesClient client;
  private final String ns;
  private final String image;

  /** On a secured HBase, the principal the workload logs in as; else empty. */
  private final String principal;

  Workload(KubernetesClient client, String ns, String image, Path jar, Settings settings)
      throws IOException {
    this.client = client;
    this.ns = ns;
    this.image = image;
    this.principal = settings.secured() ? settings.principal(Settings.WORKLOAD_PRINCIPAL_NAME) : "";
    client
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(JAR_CM)
                .withNamespace(ns)
                .endMetadata()
                .withBinaryData(
                    Map.of(
                        "workload.jar",
                        Base64.getEncoder().encodeToString(Files.readAllBytes(jar))))
                .build())
        .serverSideApply();
  }

  Pod start(String name, String... args) {
    return start(name, true, args);
  }

  /**
   * {@code identity}: on a secured HBase, whether the pod logs in (false: no keytab, no krb5.conf).
   */
  private Pod start(String name, boolean identity, String... args) {
    client.pods().inNamespace(ns).withName(name).withGracePeriod(0).delete();
    client
        .pods()
        .inNamespace(ns)
        .withName(name)
        .waitUntilCondition(p -> p == null, 60, java.util.concurrent.TimeUnit.SECONDS);
    String cmd =
        "exec java -Xmx256m -XX:+UseSerialGC -Dsun.net.inetaddr.ttl=1 --add-opens java.base/java.nio=ALL-UNNAMED"
            // a secured HBase: the realm (kdc-up.sh's ConfigMap krb5)
            + (identity && !principal.isEmpty()
                ? " -Djava.security.krb5.conf=/etc/krb5/krb5.conf"
                : "")
            + " --add-opens java.base/java.lang=ALL-UNNAMED -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true"
            + " -Dlog4j2.configurationFile=/opt/hbase/conf/log4j2.properties -Dhbase.root.logger=WARN,console"
            + " -cp /workload/workload.jar:$(/opt/hbase/entrypoint.sh classpath) Workload "
            + String.join(" ", args);
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(ns)
            .addToLabels("app.kubernetes.io/name", "e2e-workload")
            .endMetadata()
            .withNewSpec()
            .withRestartPolicy("Never")
            // Pod Security "restricted" (the HBase namespace enforces it: e2e/kind/hbase-up.sh)
            .withNewSecurityContext()
            .withRunAsUser(10001L)
            .withRunAsGroup(0L)
            .withRunAsNonRoot(true)
            .withNewSeccompProfile()
            .withType("RuntimeDefault")
            .endSeccompProfile()
            .endSecurityContext()
            .addNewContainer()
            .withName("workload")
            .withImage(image)
            .withImagePullPolicy("IfNotPresent")
            .withNewSecurityContext()
            .withAllowPrivilegeEscalation(false)
            .withNewCapabilities()
            .addToDrop("ALL")
            .endCapabilities()
            .endSecurityContext()
            .withCommand("bash", "-c", cmd)
            .withNewResources()
            .addToRequests("cpu", new Quantity("50m"))
            .addToRequests("memory", new Quantity("384Mi"))
            .addToLimits("memory", new Quantity("640Mi"))
            .endResources()
            .addNewVolumeMount()
            .withName("site")
            .withMountPath("/etc/hbase")
            .endVolumeMount()
            .addNewVolumeMount()
            .withName("jar")
            .withMountPath("/workload")
            .endVolumeMount()
            .endContainer()
            .addNewVolume()
            .withName("site")
            .withNewConfigMap()
            .withName("hbase-site")
            .endConfigMap()
            .endVolume()
            .addNewVolume()
            .withName("jar")
            .withNewConfigMap()
            .withName(JAR_CM)
            .endConfigMap()
            .endVolume()
            .endSpec()
            .build();
    if (!principal.isEmpty()) {
      if (identity) {
        secured(pod);
      } else {
        // Secured.java: no login, SIMPLE authentication
        pod.getSpec()
            .getContainers()
            .get(0)
            .setEnv(new ArrayList<>(List.of(new EnvVar("WORKLOAD_AUTH", "simple", null))));
      }
    }
    return client.resource(pod).create();
  }

  /**
   * On a secured HBase: the workload's keytab and the realm's krb5.conf mounted, and the principal
   * to log in as (e2e/workload/Secured.java reads WORKLOAD_PRINCIPAL and WORKLOAD_KEYTAB).
   */
  private void secured(Pod pod) {
    var c = pod.getSpec().getContainers().get(0);
    if (c.getEnv() == null) {
      c.setEnv(new ArrayList<>());
    }
    c.getEnv().add(new EnvVar("WORKLOAD_PRINCIPAL", principal, null));
    c.getEnv().add(new EnvVar("WORKLOAD_KEYTAB", "/etc/security/keytabs/keytab", null));
    c.getVolumeMounts()
        .add(
            new VolumeMountBuilder()
                .withName("keytab")
                .withMountPath("/etc/security/keytabs")
                .withReadOnly(true)
                .build());
    c.getVolumeMounts()
        .add(
            new VolumeMountBuilder()
                .withName("krb5")
                .withMountPath("/etc/krb5")
                .withReadOnly(true)
                .build());
    pod.getSpec()
        .getVolumes()
        .add(
            new VolumeBuilder()
                .withName("keytab")
                .withNewSecret()
                .withSecretName(Settings.WORKLOAD_KEYTAB_SECRET)
                // read by group 0, the pod's group
                .withDefaultMode(0440)
                .endSecret()
                .build());
    pod.getSpec()
        .getVolumes()
        .add(
            new VolumeBuilder()
                .withName("krb5")
                .withNewConfigMap()
                .withName("krb5")
                .endConfigMap()
                .build());
  }

  /** A finished workload pod: its phase and log. */
  record Run(String phase, String log) {}

  /** Runs a workload pod to completion (Succeeded or Failed) within {@code timeout}. */
  Run run(String name, Duration timeout, String... args) {
    return run(name, timeout, true, args);
  }

  /**
   * On a secured HBase: runs the workload without any identity (no keytab, no login: it speaks
   * SIMPLE authentication, as a client of an unsecured cluster would).
   */
  Run runWithoutIdentity(String name, Duration timeout, String... args) {
    return run(name, timeout, false, args);
  }

  private Run run(String name, Duration timeout, boolean identity, String... args) {
    start(name, identity, args);
    Pod done =
        client
            .pods()
            .inNamespace(ns)
            .withName(name)
            .waitUntilCondition(
                x ->
                    x != null
                        && x.getStatus() != null
                        && Set.of("Succeeded", "Failed").contains(x.getStatus().getPhase()),
                timeout.toMillis(),
                java.util.concurrent.TimeUnit.MILLISECONDS);
    return new Run(done.getStatus().getPhase(), log(name));
  }

  /** Starts a reader pod and returns when it reads (READER START in its log). */
  Instant startReader(String name, Duration timeout, String... args) {
    start(name, args);
    await("reader running")
        .atMost(timeout)
        .pollInterval(Duration.ofSeconds(2))
        .ignoreExceptions()
        .until(() -> String.valueOf(log(name)).contains("READER START"));
    return Instant.now();
  }

  String log(String name) {
    return client.pods().inNamespace(ns).withName(name).getLog();
  }

  void delete(String name) {
    client.pods().inNamespace(ns).withName(name).withGracePeriod(0).delete();
  }

  // ------------------------------------------------------------------ the reader's log

  static long bucketUpperMicros(int i) {
    return Math.round(50 * Math.pow(2, i / 4.0));
  }

  record Second(long at, long ok, long fail, long[] hist) {}

  /**
   * @param slowReads reads that took more than {@link #SLOW_MS} (a region on the move held them up,
   *     typically)
   * @param worstSecondP99ms the highest p99 of any one second (bucket upper bound)
   * @param secondsOverP99Target seconds whose p99 was above {@link #P99_TARGET_MS}
   */
  record Stats(
      Instant from,
      Instant to,
      int seconds,
      long ok,
      long fail,
      double p50ms,
      double p99ms,
      double maxBucketMs,
      int stalledSeconds,
      List<String> errors,
      long slowReads,
      double worstSecondP99ms,
      int secondsOverP99Target) {
    String summary() {
      return String.format(
          Locale.ROOT,
          "%d reads in %d s (%.0f/s), %d failed, p50 %.1f ms, p99 %.1f ms, max <= %.0f ms, %d s without a successful read; "
              + "%d reads over %d ms, worst second's p99 %.0f ms, %d s with p99 over %d ms",
          ok + fail,
          seconds,
          seconds == 0 ? 0.0 : (ok + fail) / (double) seconds,
          fail,
          p50ms,
          p99ms,
          maxBucketMs,
          stalledSeconds,
          slowReads,
          SLOW_MS,
          worstSecondP99ms,
          secondsOverP99Target,
          P99_TARGET_MS);
    }
  }

  static final int SLOW_MS = 100;
  static final int P99_TARGET_MS = 200;

  static List<Second> parse(String log) {
    List<Second> out = new ArrayList<>();
    for (String line : log.split("\n")) {
      if (!line.startsWith("R ")) {
        continue;
      }
      String[] f = line.split(" ");
      long at = Long.parseLong(f[1]);
      long ok = 0;
      long fail = 0;
      long[] h = new long[100];
      for (String kv : f) {
        if (kv.startsWith("ok=")) {
          ok = Long.parseLong(kv.substring(3));
        } else if (kv.startsWith("fail=")) {
          fail = Long.parseLong(kv.substring(5));
        } else if (kv.startsWith("h=") && kv.length() > 2) {
          for (String bc : kv.substring(2).split(",")) {
            String[] p = bc.split(":");
            h[Integer.parseInt(p[0])] += Long.parseLong(p[1]);
          }
        }
      }
      out.add(new Second(at, ok, fail, h));
    }
    return out;
  }

  static List<String> errors(String log, Instant from, Instant to) {
    List<String> out = new ArrayList<>();
    for (String line : log.split("\n")) {
      if (line.startsWith("E ")) {
        String[] f = line.split(" ", 3);
        try {
          long at = Long.parseLong(f[1]);
          if (at >= from.toEpochMilli() && at <= to.toEpochMilli()) {
            out.add(line);
          }
        } catch (NumberFormatException e) {
          out.add(line);
        }
      }
    }
    return out;
  }

  /** Totals and percentiles of the seconds ending in [from, to]. */
  static Stats stats(String log, Instant from, Instant to) {
    long ok = 0;
    long fail = 0;
    int seconds = 0;
    int stalled = 0;
    long slow = 0;
    long worstSecond = 0;
    int overTarget = 0;
    long[] h = new long[100];
    for (Second s : parse(log)) {
      if (s.at() < from.toEpochMilli() || s.at() > to.toEpochMilli()) {
        continue;
      }
      seconds++;
      ok += s.ok();
      fail += s.fail();
      if (s.ok() == 0) {
        stalled++;
      }
      long inSecond = 0;
      for (int i = 0; i < h.length; i++) {
        h[i] += s.hist()[i];
        inSecond += s.hist()[i];
        // a bucket whose lower bound (the previous one's upper) is at or above the threshold
        if (i > 0 && bucketUpperMicros(i - 1) >= SLOW_MS * 1000L) {
          slow += s.hist()[i];
        }
      }
      long p99 = pct(s.hist(), inSecond, 0.99);
      worstSecond = Math.max(worstSecond, p99);
      if (inSecond > 0 && p99 > P99_TARGET_MS * 1000L) {
        overTarget++;
      }
    }
    long total = 0;
    int maxBucket = 0;
    for (int i = 0; i < h.length; i++) {
      total += h[i];
      if (h[i] > 0) {
        maxBucket = i;
      }
    }
    return new Stats(
        from,
        to,
        seconds,
        ok,
        fail,
        pct(h, total, 0.5) / 1000.0,
        pct(h, total, 0.99) / 1000.0,
        total == 0 ? 0 : bucketUpperMicros(maxBucket) / 1000.0,
        stalled,
        errors(log, from, to),
        slow,
        worstSecond / 1000.0,
        overTarget);
  }

  static long pct(long[] h, long total, double q) {
    if (total == 0) {
      return 0;
    }
    long need = (long) Math.ceil(q * total);
    long seen = 0;
    for (int b = 0; b < h.length; b++) {
      seen += h[b];
      if (seen >= need) {
        return bucketUpperMicros(b);
      }
    }
    return bucketUpperMicros(h.length - 1);
  }
}
