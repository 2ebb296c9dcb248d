package dev.hbase.cache.operator.controller;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.api.v1alpha1.spec.HBaseSpec;
import dev.hbase.cache.api.v1alpha1.spec.TlsSpec;
import dev.hbase.cache.operator.controller.Observation.Observed;
import dev.hbase.cache.operator.hbase.JmxScraper;
import dev.hbase.cache.operator.hbase.KerberosLogin;
import dev.hbase.cache.operator.metrics.CacheProbe;
import dev.hbase.cache.operator.metrics.InfoAsker;
import dev.hbase.cache.operator.metrics.InfoServers;
import dev.hbase.cache.operator.metrics.MetricsCollector;
import dev.hbase.cache.operator.metrics.ScrapeBudget;
import dev.hbase.cache.operator.metrics.SecuredProbes;
import dev.hbase.cache.operator.render.Desired;
import dev.hbase.cache.operator.render.SiteXml;
import dev.hbase.cache.operator.roll.RollModel.PodView;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.Map;
import java.util.Optional;

/**
 * How the operator reads the policy's RegionServers' /jmx (hit ratios, the warm gate, sizing
 * advice): plain HTTP to each pod's IP, or, with spec.hbase.tls, HTTPS to each pod's IP, the server
 * proving the pod's DNS name with a certificate that chains to exactly the CA of the policy's
 * ConfigMap, with SPNEGO as the policy's Kerberos identity where the base hbase-site asks for it
 * ({@code hbase.security.authentication.ui=kerberos}). A CA certificate is public: it is read from
 * a ConfigMap of the policy's namespace, which the policy's author can read too (the operator
 * trusts it for that policy's servers only).
 *
 * <p>Refused, with a reason, when the cluster serves HTTPS and no usable CA is given, or when a
 * Ready pod's server does not prove its name with that CA, does not speak TLS or refuses SPNEGO
 * (each pod checked once per CA and identity): the reconcile then starts no roll and restarts no
 * pod, and a roll under way is held, HBase given back (a roll whose warm gate could read no server
 * would restart pods blind).
 */
final class InfoServersStep {

  static final String SSL_ENABLED = "hbase.ssl.enabled";
  static final String UI_AUTHENTICATION = "hbase.security.authentication.ui";
  static final String DEFAULT_CA_KEY = "ca.crt";

  /** The most text a CA ConfigMap key may hold (a bundle of a few dozen certificates). */
  static final int MAX_CA_CHARS = 256 * 1024;

  static final String DNS_LABEL = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";

  sealed interface Result permits Access, Refused {}

  /** How to read the servers. */
  record Access(InfoServers info) implements Result {}

  /** No way to read them: the reason and message say why. */
  record Refused(Reason reason, String message) implements Result {}

  private final CacheProbe plain;
  private final SecuredProbes secured;
  private final String clusterDomain;
  private final InfoAsker asker;

  /**
   * Per probe (a CA and an identity), the pods (uid and name) whose server proved its name and was
   * let in once: not asked again each reconcile. Weak: a probe no longer made goes with its pods.
   */
  private final Map<CacheProbe, java.util.Set<String>> trusted =
      java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

  /** Pods (uid and name) whose server did not answer the check, and when: asked again later. */
  private final Map<String, java.time.Instant> unanswered =
      java.util.Collections.synchronizedMap(
          new java.util.LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, java.time.Instant> eldest) {
              return size() > 1024;
            }
          });

  /** How long a pod whose server did not answer the check is not asked again by it. */
  static final java.time.Duration ASK_AGAIN = java.time.Duration.ofSeconds(60);

  /**
   * @param plain the probe for plain HTTP
   * @param secured the probes for HTTPS
   * @param clusterDomain the cluster's DNS domain (the chart's clusterDomain, cluster.local)
   * @param asker asks the servers (the shared pool, each reconcile within its budget)
   */
  InfoServersStep(CacheProbe plain, SecuredProbes secured, String clusterDomain, InfoAsker asker) {
    this.plain = plain;
    this.secured = secured;
    this.clusterDomain = clusterDomain;
    this.asker = asker;
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
    // the reconcile's time for its info servers, on its namespace's share of the scrape pool
    ScrapeBudget budget = ScrapeBudget.of(c.namespace());
    if (tls == null) {
      return new Access(InfoServers.byIp(plain, port).within(budget));
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
    if (pem.length() > MAX_CA_CHARS) {
      return new Refused(
          Reason.TlsCaInvalid,
          where
              + " key "
              + key
              + " is larger than "
              + MAX_CA_CHARS / 1024
              + " KiB: a CA, not more");
    }
    String service = o.target().getSpec().getServiceName();
    if (service == null || !service.matches(DNS_LABEL)) {
      // the name each pod must prove it is, and the HTTP/ principal SPNEGO asks a ticket for:
      // always under the policy's own namespace's zone, never a name the StatefulSet's author picks
      return new Refused(
          Reason.InfoServerNameInvalid,
          "the StatefulSet's serviceName "
              + (service == null ? "is not set" : "'" + service + "' is not a DNS label")
              + ": the operator needs <pod>.<serviceName>."
              + c.namespace()
              + ".svc."
              + clusterDomain
              + ", the name each pod's certificate carries");
    }
    CacheProbe probe;
    try {
      probe = secured.probe(pem, spnego ? login : null);
    } catch (java.security.GeneralSecurityException | RuntimeException e) {
      return new Refused(
          Reason.TlsCaInvalid,
          where + " key " + key + " holds no PEM certificate: " + cut(e.getMessage()));
    }
    InfoServers info =
        InfoServers.byName(probe, port, service, c.namespace(), clusterDomain).within(budget);
    Optional<Refused> bad = refused(info, o, where, c.now());
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
   * Each Ready pod asked once per CA and identity (a restarted pod, a new uid, once more): a
   * certificate that does not chain to the CA or lacks the pod's name, a server that does not speak
   * TLS or one that refuses SPNEGO is a refusal (a pod restarted with a bad certificate stops the
   * roll at it, instead of a warm gate that can read nothing). Whatever else fails (no answer, a
   * refused connection) leaves that pod without a sample, as for any scrape.
   */
  private Optional<Refused> refused(
      InfoServers info, Observed o, String where, java.time.Instant now) {
    java.util.Set<String> known =
        trusted.computeIfAbsent(
            info.probe(), k -> java.util.concurrent.ConcurrentHashMap.newKeySet());
    java.util.List<PodView> check = new java.util.ArrayList<>();
    for (PodView pod : o.pods()) {
      if (!pod.ready() || pod.terminating() || pod.ip() == null) {
        continue;
      }
      String seen = pod.uid() + "|" + info.name(pod);
      java.time.Instant failed = unanswered.get(seen);
      if (known.contains(seen) || (failed != null && failed.plus(ASK_AGAIN).isAfter(now))) {
        continue; // proved its name, or did not answer a moment ago (each ask may take seconds)
      }
      check.add(pod);
    }
    // all at once, on the namespace's share of the scrape pool, within the reconcile's budget
    Map<String, InfoAsker.Answer> answers = asker.ask(info, check, false);
    for (PodView pod : check) {
      String name = info.name(pod);
      String seen = pod.uid() + "|" + name;
      InfoAsker.Answer a = answers.get(pod.name());
      if (a.sample() != null) {
        known.add(seen); // its server proved its name: not asked again by this check
        continue;
      }
      Refused r =
          a.failure() instanceof JmxScraper.ScrapeException e ? refusal(e, pod, name, where) : null;
      if (r != null) {
        return Optional.of(r);
      }
      unanswered.put(seen, now);
    }
    return Optional.empty();
  }

  /** The refusal a failed ask of a pod's server makes, or null (no answer: no sample only). */
  private static Refused refusal(
      JmxScraper.ScrapeException e, PodView pod, String name, String where) {
    String why = pod.name() + " (" + cut(e.getMessage()) + ")";
    return switch (e.kind()) {
      case UNTRUSTED ->
          new Refused(
              Reason.TlsUntrusted,
              "the info server's certificate must chain to the CA in "
                  + where
                  + " and carry the name "
                  + name
                  + ": "
                  + why);
      case NOT_TLS ->
          new Refused(
              Reason.TlsUntrusted,
              "the info server does not answer over TLS (spec.hbase.tls is set): " + why);
      case UNAUTHORIZED ->
          new Refused(
              Reason.SpnegoRefused,
              "the info server refused SPNEGO: the cluster needs the principal HTTP/"
                  + name
                  + " and to let the policy's identity in: "
                  + why);
      default -> null;
    };
  }

  /** An exception's text for a condition or event: at most 300 characters. */
  static String cut(String text) {
    return text == null || text.length() <= 300 ? text : text.substring(0, 300) + "...";
  }
}
