package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.roll.RollModel.PodView;

/**
 * Where one policy's RegionServers answer /jmx and how they are asked: plain HTTP to each pod's IP,
 * or (spec.hbase.tls) HTTPS with the policy's CA, and SPNEGO where the cluster asks for it, to each
 * pod's IP as well, the server proving it is the pod's DNS name (its certificate and its {@code
 * HTTP/} principal carry it). Asked on the shared {@link ScrapePool} by {@link InfoAsker}, within
 * one reconcile's {@link ScrapeBudget}.
 *
 * @param probe what reads a server's figures (for TLS: one that trusts exactly the policy's CA)
 * @param port the info port (spec.hbase.infoPort)
 * @param domain null: no name; else the pod must prove it is {@code <pod>.<domain>}, {@code
 *     <serviceName>.<namespace>.svc.<clusterDomain>}
 * @param budget the reconcile's time for its info servers and the namespace it draws on; null: each
 *     ask gets a budget of its own (tests)
 */
public record InfoServers(CacheProbe probe, int port, String domain, ScrapeBudget budget) {

  /** Plain HTTP to each pod's IP. */
  public static InfoServers byIp(CacheProbe probe, int port) {
    return new InfoServers(probe, port, null, null);
  }

  /** Each pod by its DNS name under the StatefulSet's governing service. */
  public static InfoServers byName(
      CacheProbe probe, int port, String service, String namespace, String clusterDomain) {
    return new InfoServers(probe, port, service + "." + namespace + ".svc." + clusterDomain, null);
  }

  /** The same servers, asked within {@code budget} (one reconcile's). */
  public InfoServers within(ScrapeBudget budget) {
    return new InfoServers(probe, port, domain, budget);
  }

  /** The name the pod must prove it is (its IP without TLS). */
  public String name(PodView p) {
    return domain == null ? p.ip() : p.name() + "." + domain;
  }

  /** Where the operator connects to ask the pod: its IP and the info port. */
  public String address(PodView p) {
    String ip = p.ip();
    return (ip != null && ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
  }

  /** The pod's cache figures, asked at its IP. */
  public dev.hbase.cache.operator.hbase.CacheSample scrape(PodView p) throws java.io.IOException {
    return probe.scrape(p.ip(), name(p), port);
  }

  /** The pod's GC milliseconds since its start, asked at its IP; null when unknown. */
  public Long gcTimeMillis(PodView p) throws java.io.IOException {
    return probe.gcTimeMillis(p.ip(), name(p), port);
  }
}
