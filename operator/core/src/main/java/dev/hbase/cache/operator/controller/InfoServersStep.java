package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.TlsSpec;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.metrics.InfoServers;
import dev.hbase.cache.operator.metrics.MetricsCollector;
import dev.hbase.cache.operator.metrics.SecuredProbes;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/**
 * How the operator reads the policy's RegionServers' /jmx (hit ratios, the warm gate, sizing
 * advice): plain HTTP to each pod's IP, or, with spec.hbase.tls, HTTPS trusting exactly the CA of
 * the policy's ConfigMap, to each pod's DNS name, with SPNEGO as the policy's Kerberos identity
 * where the base hbase-site asks for it ({@code hbase.security.authentication.ui=kerberos}). A CA
 * certificate is public: it is read from a ConfigMap of the policy's namespace, which the policy's
 * author can read too (the operator trusts it for that policy's servers only).
 *
 * <p>Refused, with a reason, when the cluster serves HTTPS and no usable CA is given, or when one
 * Ready pod's certificate does not chain to the CA or carry its DNS name: the reconcile then sends
 * nothing to HBase and restarts no pod (a roll whose warm gate could read no server would restart
 * pods blind).
 */
final class InfoServersStep {

  static final String SSL_ENABLED = "hbase.ssl.enabled";
  static final String UI_AUTHENTICATION = "hbase.security.authentication.ui";
  static final String DEFAULT_CA_KEY = "ca.crt";

  sealed interface Result permits Access, Refused {}

  /** How to read the servers. */
  record Access(InfoServers info) implements Result {}

  /** No way to read them: the reason and message say why. */
  record Refused(Reason reason, String message) implements Result {}

  private final CacheProbe plain;
  private final SecuredProbes secured;
  private final String clusterDomain;

  /**
   * @param plain the probe for plain HTTP
   * @param secured the probes for HTTPS
   * @param clusterDomain the cluster's DNS domain (the chart's clusterDomain, cluster.local)
   */
  InfoServersStep(CacheProbe plain, SecuredProbes secured, String clusterDomain) {
    this.plain = plain;
    this.secured = secured;
    this.clusterDomain = clusterDomain;
  }

  Result resolve(PolicyContext c, Observed o, KerberosLogin login) {
    BlockCachePolicy policy = c.policy();
    HBaseSpec hbase = policy.getSpec().getHbase();
    TlsSpec tls = hbase == null ? null : hbase.getTls();
    int port = MetricsCollector.infoPort(policy);
    Map<String, String> site =
        o.base() == null || o.base().getData() == null
            ? Map.of()
            : SiteXml.parse(o.base().getData().get(Desired.SITE_FILE));
    boolean spnego = "kerberos".equalsIgnoreCase(site.get(UI_AUTHENTICATION));
    Refused r = refusal(tls, site, login != null);
    if (r != null) {
      return r;
    }
    if (tls == null) {
      return new Access(InfoServers.byIp(plain, port));
    }
    String where = "ConfigMap " + c.namespace() + "/" + tls.getCaConfigMap();
    Optional<ConfigMap> cm = c.configMap(tls.getCaConfigMap());
    if (cm.isEmpty()) {
      return new Refused(Reason.TlsCaMissing, where + " (spec.hbase.tls.caConfigMap) not found");
    }
    String key = tls.getCaKey() == null ? DEFAULT_CA_KEY : tls.getCaKey();
    String pem = cm.get().getData() == null ? null : cm.get().getData().get(key);
    if (pem == null || pem.isBlank()) {
      return new Refused(Reason.TlsCaMissing, where + " has no key " + key);
    }
    CacheProbe probe;
    try {
      probe = secured.probe(pem, spnego ? login : null);
    } catch (java.security.GeneralSecurityException | RuntimeException e) {
      return new Refused(
          Reason.TlsCaInvalid,
          where + " key " + key + " holds no PEM certificate: " + e.getMessage());
    }
    InfoServers info =
        InfoServers.byName(
            probe, port, o.target().getSpec().getServiceName(), c.namespace(), clusterDomain);
    Optional<Refused> bad = untrusted(info, o, where);
    return bad.isPresent() ? bad.get() : new Access(info);
  }

  /**
   * Why the cluster's info servers cannot be read as the policy says (null: they can): HTTPS or
   * SPNEGO in the base hbase-site without spec.hbase.tls, SPNEGO without an identity.
   */
  static Refused refusal(TlsSpec tls, Map<String, String> site, boolean identity) {
    boolean ssl = "true".equalsIgnoreCase(site.getOrDefault(SSL_ENABLED, "false").strip());
    boolean spnego = "kerberos".equalsIgnoreCase(site.get(UI_AUTHENTICATION));
    if (tls == null && ssl) {
      return new Refused(
          Reason.TlsCaMissing,
          "the base hbase-site serves the info servers over HTTPS ("
              + SSL_ENABLED
              + "=true): name the CA of their certificates in spec.hbase.tls.caConfigMap");
    }
    if (tls == null && spnego) {
      return new Refused(
          Reason.TlsCaMissing,
          "the base hbase-site asks SPNEGO of the info servers ("
              + UI_AUTHENTICATION
              + "=kerberos), which the operator sends over HTTPS only: set spec.hbase.tls");
    }
    if (spnego && !identity) {
      return new Refused(
          Reason.SpnegoWithoutKerberos,
          "the base hbase-site asks SPNEGO of the info servers ("
              + UI_AUTHENTICATION
              + "=kerberos): set spec.hbase.kerberos, the identity the operator authenticates as");
    }
    return null;
  }

  /**
   * One Ready pod asked: a certificate that does not chain to the CA or lacks the pod's name is a
   * refusal (whatever else fails, a timeout, a 401, leaves that pod without a sample, as for any
   * scrape).
   */
  private static Optional<Refused> untrusted(InfoServers info, Observed o, String where) {
    Optional<PodView> pod = o.pods().stream().filter(p -> p.ready() && p.ip() != null).findFirst();
    if (pod.isEmpty()) {
      return Optional.empty();
    }
    try {
      info.probe().scrape(info.host(pod.get()), info.port());
      return Optional.empty();
    } catch (JmxScraper.ScrapeException e) {
      if (!e.untrusted()) {
        return Optional.empty();
      }
      return Optional.of(
          new Refused(
              Reason.TlsUntrusted,
              "the info server of "
                  + pod.get().name()
                  + " is not trusted: its certificate must chain to the CA in "
                  + where
                  + " and carry the name "
                  + info.host(pod.get())
                  + " ("
                  + e.getMessage()
                  + ")"));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
