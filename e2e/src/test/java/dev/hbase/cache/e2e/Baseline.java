package dev.hbase.cache.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.spec.AutoTuneSpec;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.KerberosSpec;
import dev.hbase.cache.api.v1alpha1.spec.MetricsSpec;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * What the scenario classes start from, made the one way both the setup steps (1-3) and the
 * preconditions ({@link Needs}) make it: the suite's PersistentFile policy, the table the reader
 * reads, the reader. The setup steps assert what they made; a precondition only makes it.
 */
final class Baseline {
  private Baseline() {}

  /**
   * The suite's policy as step 2 creates it: examples/persistent-file.yaml with hit ratios every 10
   * s (instead of 30 s) and sizing advice every 3 min (instead of every hour), its cache volumes on
   * root-owned storage as a CSI driver gives it ({@link RootOwnedVolumes}: made once in the run;
   * the volumes of a policy deleted since, and their caches, are used again), on a secured HBase as
   * the operator's own principal.
   */
  static BlockCachePolicy suitePolicy(KindScenario s) {
    BlockCachePolicy p =
        s.client
            .resources(BlockCachePolicy.class)
            .load(s.repo.resolve("examples/persistent-file.yaml").toFile())
            .item();
    p.getMetadata().setNamespace(s.cluster.ns);
    p.getSpec().setMetrics(new MetricsSpec().setInterval("10s"));
    p.getSpec().setAutoTune(new AutoTuneSpec().setWindow("3m"));
    // kind's local-path directories are 0777 and would hide a RegionServer, user 10001, that
    // cannot write its cache file
    boolean made =
        s.client.storage().v1().storageClasses().withName(RootOwnedVolumes.ROOT_OWNED_CLASS).get()
            != null;
    p.getSpec()
        .getStorage()
        .setStorageClassName(
            made
                ? RootOwnedVolumes.ROOT_OWNED_CLASS
                : RootOwnedVolumes.create(
                    s.client, s.settings, s.report, p.getSpec().getStorage().getSize().toString()));
    if (s.settings.secured()) {
      asTheOperatorsPrincipal(s, p);
    }
    return p;
  }

  /**
   * Creates the suite's policy and keeps what the API server made of it (its defaults filled in) as
   * the spec later classes check the policy against ({@link Suite#baseline}).
   */
  static void create(KindScenario s, BlockCachePolicy p) {
    s.suite.baseline = Serialization.clone(s.client.resource(p).create());
  }

  /**
   * The operator's principal gets HBase's READ and ADMIN permissions, as the README tells an
   * administrator to grant them (the e2e workload, an HBase superuser of the secured chart, grants
   * them), and the policy names that principal and its keytab's Secret (e2e/kind/kdc-up.sh made
   * both).
   */
  static void asTheOperatorsPrincipal(KindScenario s, BlockCachePolicy p) {
    Workload.Run g =
        s.workload.run(
            "e2e-grant", Duration.ofMinutes(3), "grant", Settings.OPERATOR_PRINCIPAL_NAME, "RA");
    assertThat(g.log())
        .as("grant of RA to the operator's principal: %s", g.log())
        .contains("GRANT OK");
    assertThat(g.phase()).as("e2e-grant pod").isEqualTo("Succeeded");
    if (p.getSpec().getHbase() == null) {
      p.getSpec().setHbase(new HBaseSpec());
    }
    p.getSpec()
        .getHbase()
        .setKerberos(
            new KerberosSpec()
                .setPrincipal(s.settings.principal(Settings.OPERATOR_PRINCIPAL_NAME))
                .setKeytabSecret(Settings.OPERATOR_KEYTAB_SECRET));
  }

  /**
   * The top-level fields of {@code now} that differ from {@code baseline} but for
   * tuning.writerThreads (which the roll steps change), or an empty list.
   */
  static List<String> differences(BlockCachePolicySpec baseline, BlockCachePolicySpec now) {
    ObjectNode a = withoutWriterThreads(baseline);
    ObjectNode b = withoutWriterThreads(now);
    List<String> out = new ArrayList<>();
    for (Iterator<String> names = a.fieldNames(); names.hasNext(); ) {
      String f = names.next();
      if (!a.get(f).equals(b.get(f))) {
        out.add(f + " " + b.get(f) + " (the suite's: " + a.get(f) + ")");
      }
    }
    for (Iterator<String> names = b.fieldNames(); names.hasNext(); ) {
      String f = names.next();
      if (!a.has(f)) {
        out.add(f + " " + b.get(f) + " (the suite's: none)");
      }
    }
    return out;
  }

  private static ObjectNode withoutWriterThreads(BlockCachePolicySpec spec) {
    ObjectNode n = Serialization.jsonMapper().valueToTree(spec);
    JsonNode tuning = n.get("tuning");
    if (tuning instanceof ObjectNode t) {
      t.remove("writerThreads");
      if (t.isEmpty()) {
        n.remove("tuning");
      }
    }
    return n;
  }

  /**
   * The table the reader reads: {@link KindScenario#ROWS} rows of {@link KindScenario#VALUE_BYTES}
   * in {@link KindScenario#REGIONS} regions, flushed and scanned once (a table there already is
   * dropped first). Returns the load pod's run; the table counts as loaded when it said LOAD OK.
   */
  static Workload.Run loadTable(KindScenario s) {
    Workload.Run load =
        s.workload.run(
            "e2e-load",
            Duration.ofMinutes(10),
            "load",
            KindScenario.TABLE,
            "" + KindScenario.ROWS,
            "" + KindScenario.VALUE_BYTES,
            "" + KindScenario.REGIONS);
    s.suite.tableLoaded = "Succeeded".equals(load.phase()) && load.log().contains("LOAD OK");
    return load;
  }

  /**
   * The reader that runs from here to the end (unless a step stops it): every row of the table, 200
   * random Gets/s; returns when it reads.
   */
  static Instant startReader(KindScenario s) {
    s.suite.readerStart =
        s.workload.startReader(
            KindScenario.READER,
            Duration.ofMinutes(3),
            "read",
            KindScenario.TABLE,
            "" + KindScenario.ROWS,
            "2",
            "200",
            "0");
    return s.suite.readerStart;
  }
}
