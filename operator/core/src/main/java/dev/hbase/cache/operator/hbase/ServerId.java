package dev.hbase.cache.operator.hbase;

/**
 * One RegionServer instance, as HBase names it ("host,port,startcode"). A restarted RegionServer
 * keeps its host and port but gets a new start code, so it is a new instance for HBase: a
 * decommission mark or a dead-server entry belongs to the old one.
 */
public record ServerId(String host, int port, long startCode) {

  public ServerId {
    if (host == null || host.isBlank() || port <= 0) {
      throw new IllegalArgumentException("bad server " + host + ":" + port);
    }
  }

  /** Parses HBase's "host,port,startcode". */
  public static ServerId parse(String serverName) {
    String[] parts = serverName.split(",");
    if (parts.length != 3) {
      throw new IllegalArgumentException("not host,port,startcode: " + serverName);
    }
    return new ServerId(parts[0], Integer.parseInt(parts[1]), Long.parseLong(parts[2]));
  }

  /** Same host and port, whatever the start code: the same pod across a restart. */
  public boolean sameEndpoint(ServerId other) {
    return port == other.port && host.equalsIgnoreCase(other.host);
  }

  public boolean sameEndpoint(String otherHost, int otherPort) {
    return port == otherPort && host.equalsIgnoreCase(otherHost);
  }

  public String hostAndPort() {
    return host + ":" + port;
  }

  @Override
  public String toString() {
    return host + "," + port + "," + startCode;
  }
}
