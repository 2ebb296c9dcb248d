package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterId;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.RegionLocations;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.ConnectionRegistry;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ZooKeeperProtos;
import org.apache.hadoop.hbase.zookeeper.ReadOnlyZKClient;
import org.apache.hadoop.hbase.zookeeper.ZNodePaths;
import org.apache.hbase.thirdparty.io.netty.util.HashedWheelTimer;

/**
 * The operator's HBase client finds a cluster through this registry instead of HBase's {@code
 * ZKConnectionRegistry}: the ZooKeeper a policy names is a tenant's, and HBase's parses its znodes
 * by lengths inside them. A second review showed a 5-byte {@code /hbase/hbaseid} ({@code FF C0 00
 * 00 00}) makes {@code ZKMetadata.removeMetaData} allocate 1 GiB at the connect: the operator
 * exited under the chart's heap, for every tenant, at every start. HBase's also reads every meta
 * replica znode the base znode lists (up to 65,535, each up to 1 MiB, kept until all answer) and
 * waits for the cluster id with no deadline.
 *
 * <p>Here: the three znodes the client needs (cluster id, active master, the default meta replica's
 * location) are read each within the ZooKeeper read deadline, refused over {@link #MAX_ZNODE}
 * bytes, their metadata header checked against their length before anything is allocated ({@link
 * #strip}), host names over 253 characters refused, and only the default meta replica is read (the
 * operator reads no meta replica). What the znodes say is otherwise read as HBase reads it.
 */
public final class BoundedZkRegistry implements ConnectionRegistry {
  /** The largest znode read: HBase's are tens to a few hundred bytes. */
  static final int MAX_ZNODE = 64 << 10;

  /** A DNS name's longest. */
  static final int MAX_HOST = 253;

  /** The ZooKeeper read deadline, as HBase's registry's default. */
  static final int READ_TIMEOUT_MS = 10_000;

  private static final byte MAGIC = (byte) 0xFF;
  private static final byte[] PB_MAGIC = {'P', 'B', 'U', 'F'};

  /** ZooKeeper's retries' timer, one daemon thread for every registry (as HBase's). */
  private static final HashedWheelTimer TIMER =
      new HashedWheelTimer(
          r -> {
            Thread t = new Thread(r, "hbase-zk-registry-timer");
            t.setDaemon(true);
            return t;
          },
          10,
          TimeUnit.MILLISECONDS);

  private final ReadOnlyZKClient zk;
  private final ZNodePaths paths;

  /** HBase's client makes it by reflection ({@code hbase.client.registry.impl}). */
  public BoundedZkRegistry(Configuration conf, User ignored) {
    this.paths = new ZNodePaths(conf);
    this.zk = new ReadOnlyZKClient(conf, TIMER);
  }

  /** Has the client made from {@code conf} find its cluster here. */
  static void install(Configuration conf) {
    conf.set("hbase.client.registry.impl", BoundedZkRegistry.class.getName());
  }

  @Override
  public CompletableFuture<String> getClusterId() {
    return read(paths.clusterIdZNode)
        .thenApply(
            data -> {
              byte[] d = unchecked(data);
              if (d == null) {
                return null;
              }
              try {
                return ClusterId.parseFrom(d).toString();
              } catch (Exception e) {
                throw new IllegalStateException("the cluster id znode does not parse: " + e, e);
              }
            });
  }

  @Override
  public CompletableFuture<ServerName> getActiveMaster() {
    return read(paths.masterAddressZNode)
        .thenApply(
            data -> {
              byte[] d = pb(unchecked(data));
              if (d == null) {
                return null;
              }
              try {
                return name(ZooKeeperProtos.Master.parseFrom(d).getMaster());
              } catch (IOException e) {
                throw new IllegalStateException("the master znode does not parse: " + e, e);
              }
            });
  }

  @Override
  public CompletableFuture<RegionLocations> getMetaRegionLocations() {
    return read(paths.getZNodeForReplica(
            org.apache.hadoop.hbase.client.RegionInfo.DEFAULT_REPLICA_ID))
        .thenApply(
            data -> {
              byte[] d = pb(unchecked(data));
              if (d == null) {
                throw new IllegalStateException("no meta znode");
              }
              try {
                ServerName sn = name(ZooKeeperProtos.MetaRegionServer.parseFrom(d).getServer());
                return new RegionLocations(
                    new HRegionLocation(RegionInfoBuilder.FIRST_META_REGIONINFO, sn));
              } catch (IOException e) {
                throw new IllegalStateException("the meta znode does not parse: " + e, e);
              }
            });
  }

  @Override
  public String getConnectionString() {
    return zk.getConnectString() + ":" + paths.baseZNode;
  }

  @Override
  public void close() {
    zk.close();
  }

  private CompletableFuture<byte[]> read(String path) {
    return zk.get(path, READ_TIMEOUT_MS)
        .thenApply(
            data -> {
              if (data != null && data.length > MAX_ZNODE) {
                throw new IllegalStateException(
                    "znode " + path + " holds " + data.length + " bytes, more than HBase writes");
              }
              return data;
            });
  }

  private static byte[] unchecked(byte[] data) {
    try {
      return strip(data);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * A znode's data without HBase's metadata header (magic {@code 0xFF}, a 4-byte id length, the
   * id), as {@code ZKMetadata.removeMetaData} reads it, with the id length checked against the data
   * first; null for none.
   */
  static byte[] strip(byte[] data) throws IOException {
    if (data == null || data.length == 0) {
      return null;
    }
    if (data.length > MAX_ZNODE) {
      throw new IOException("a znode of " + data.length + " bytes, more than HBase writes");
    }
    if (data[0] != MAGIC) {
      return data;
    }
    if (data.length < 5) {
      throw new IOException("a znode's metadata header is cut short (" + data.length + " bytes)");
    }
    int id =
        ((data[1] & 0xFF) << 24)
            | ((data[2] & 0xFF) << 16)
            | ((data[3] & 0xFF) << 8)
            | (data[4] & 0xFF);
    if (id < 0 || id > data.length - 5) {
      throw new IOException(
          "a znode's metadata header names an id of " + id + " bytes in " + data.length);
    }
    return Arrays.copyOfRange(data, 5 + id, data.length);
  }

  /** The protobuf after HBase's "PBUF" prefix; null for none. */
  private static byte[] pb(byte[] d) {
    if (d == null) {
      return null;
    }
    if (d.length < 4 || !Arrays.equals(d, 0, 4, PB_MAGIC, 0, 4)) {
      throw new IllegalStateException("a znode without HBase's protobuf prefix");
    }
    return Arrays.copyOfRange(d, 4, d.length);
  }

  /** A server name in ZooKeeper that does not resolve: refused before the client connects. */
  static final class Unresolved extends IllegalStateException {
    Unresolved(String message) {
      super(message);
    }
  }

  private static ServerName name(HBaseProtos.ServerName p) {
    if (p.getHostName().length() > MAX_HOST) {
      throw new IllegalStateException(
          "a server name of " + p.getHostName().length() + " characters in ZooKeeper");
    }
    // resolved here, on this registry's own ZooKeeper thread, before HBase's client connects to it
    // on the Netty event loop every connection shares: a tenant's name that resolves slowly holds
    // this connection alone, and one that does not resolve is not asked
    if (!AdminHBaseCluster.resolves(p.getHostName())) {
      throw new Unresolved(
          "the server name " + p.getHostName() + " in ZooKeeper does not resolve: not asked");
    }
    return ServerName.valueOf(p.getHostName(), p.getPort(), p.getStartCode());
  }
}
