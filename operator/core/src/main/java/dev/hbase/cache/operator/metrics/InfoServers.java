package dev.hbase.cache.operator.metrics;

import dev.hbase.cache.operator.roll.RollModel.PodView;

/**
 * Where one policy's RegionServers answer /jmx and how they are asked: plain HTTP to each pod's IP,
 * or (spec.hbase.tls) HTTPS with the policy's CA, and SPNEGO where the cluster asks for it, to each
 * pod's DNS name, which its certificate and its {@code HTTP/} principal carry.
 *
 * @param probe what reads a server's figures (for TLS: one that trusts exactly the policy's CA)
 * @param port the info port (spec.hbase.infoPort)
 * @param domain null: the pod's IP; else the pod is asked as {@code <pod>.<domain>}, {@code
 *     <serviceName>.<namespace>.svc.<clusterDomain>}
 */
public record InfoServers(CacheProbe probe, int port, String domain) {

  /** Plain HTTP to each pod's IP. */
  public static InfoServers byIp(CacheProbe probe, int port) {
    return new InfoServers(probe, port, null);
  }

  /** Each pod by its DNS name under the StatefulSet's governing service. */
  public static InfoServers byName(
      CacheProbe probe, int port, String service, String namespace, String clusterDomain) {
    return new InfoServers(probe, port, service + "." + namespace + ".svc." + clusterDomain);
  }

  /** The host the pod is asked at. */
  public String host(PodView p) {
    return domain == null ? p.ip() : p.name() + "." + domain;
  }
}
