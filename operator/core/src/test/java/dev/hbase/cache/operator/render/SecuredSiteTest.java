package dev.hbase.cache.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.TargetRef;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Planner;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 27: the RegionServers' hbase-site the operator derives keeps a secured cluster's settings.
 * For every mode, the planner sets and removes no security, Kerberos, keytab or SSL key, and the
 * derived site carries each of the base's with its value, the other files of the base ConfigMap (a
 * JAAS file, ssl-server.xml) unchanged. (The keytab mounts are the StatefulSet's own: the operator
 * applies only the fields it owns, see docs/operations/statefulset.md.)
 */
class SecuredSiteTest {

  /** A secured cluster's hbase-site keys, as HBase's security guide and SecuredClusterIT set. */
  static final Map<String, String> SECURED = new LinkedHashMap<>();

  static {
    SECURED.put("hbase.security.authentication", "kerberos");
    SECURED.put("hadoop.security.authentication", "kerberos");
    SECURED.put("hbase.security.authorization", "true");
    SECURED.put("hbase.rpc.protection", "privacy");
    SECURED.put("hbase.master.kerberos.principal", "hbase/_HOST@EXAMPLE.COM");
    SECURED.put("hbase.master.keytab.file", "/etc/security/keytabs/hbase.keytab");
    SECURED.put("hbase.regionserver.kerberos.principal", "hbase/_HOST@EXAMPLE.COM");
    SECURED.put("hbase.regionserver.keytab.file", "/etc/security/keytabs/hbase.keytab");
    SECURED.put(
        "hbase.coprocessor.region.classes",
        "org.apache.hadoop.hbase.security.token.TokenProvider,"
            + "org.apache.hadoop.hbase.security.access.AccessController");
    SECURED.put("hbase.zookeeper.client.keytab.file", "/etc/security/keytabs/hbase.keytab");
    SECURED.put("hbase.zookeeper.client.kerberos.principal", "hbase/_HOST@EXAMPLE.COM");
    SECURED.put("hbase.ssl.enabled", "true");
    SECURED.put("ssl.server.keystore.location", "/etc/security/tls/keystore.p12");
    SECURED.put("ssl.server.keystore.password", "secret");
    SECURED.put("hbase.security.authentication.ui", "kerberos");
    SECURED.put(
        "hbase.security.authentication.spnego.kerberos.principal", "HTTP/_HOST@EXAMPLE.COM");
    SECURED.put(
        "hbase.security.authentication.spnego.kerberos.keytab",
        "/etc/security/keytabs/spnego.keytab");
  }

  static boolean securityKey(String k) {
    return k.startsWith("hbase.security.")
        || k.startsWith("hadoop.security.")
        || k.startsWith("ssl.")
        || k.startsWith("hbase.ssl.")
        || k.contains("kerberos")
        || k.contains("keytab")
        || k.equals("hbase.rpc.protection")
        || k.startsWith("hbase.coprocessor.");
  }

  @ParameterizedTest
  @EnumSource(CacheMode.class)
  void theDerivedSiteKeepsEverySecuritySetting(CacheMode mode) {
    BlockCachePolicySpec spec =
        new BlockCachePolicySpec()
            .setTargetRef(new TargetRef().setName("rs"))
            .setHbaseSiteConfigMap("hbase-site")
            .setMode(mode);
    if (mode == CacheMode.File || mode == CacheMode.PersistentFile) {
      spec.setMemory(new MemorySpec().setBucketCache(new Quantity("2Gi")));
    }
    PlanResult r = Planner.plan(spec, Sizes.parse("8Gi"), null);
    assertThat(r).as("plan for %s", mode).isInstanceOf(Plan.class);
    Plan plan = (Plan) r;
    assertThat(plan.regionServerSite().keySet())
        .as("keys the planner sets")
        .noneMatch(SecuredSiteTest::securityKey);
    assertThat(plan.regionServerSiteRemoved())
        .as("keys the planner removes")
        .noneMatch(SecuredSiteTest::securityKey);

    Map<String, String> base = new LinkedHashMap<>();
    base.put(Desired.SITE_FILE, SiteXml.render(SECURED, null));
    base.put("jaas.conf", "Client { com.sun.security.auth.module.Krb5LoginModule required; };");
    base.put("ssl-server.xml", "<configuration/>");
    Map<String, String> derived =
        Desired.siteData(base, plan.regionServerSite(), plan.regionServerSiteRemoved(), "derived");
    assertThat(SiteXml.parse(derived.get(Desired.SITE_FILE)))
        .as("the derived hbase-site")
        .containsAllEntriesOf(SECURED);
    assertThat(derived)
        .containsEntry("jaas.conf", base.get("jaas.conf"))
        .containsEntry("ssl-server.xml", base.get("ssl-server.xml"));
  }
}
