package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.RegionLocations;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.CreateMode;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.Watcher;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.ZooDefs;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.ZooKeeper;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.server.ZooKeeperServer;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ZooKeeperProtos;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's registry against a tenant's ZooKeeper (a real one, in process): znodes a tenant
 * can write, read without HBase's length-trusting parser. The reviewer's case: a 5-byte {@code
 * /hbase/hbaseid} of {@code FF C0 00 00 00}, for which HBase's {@code ZKMetadata.removeMetaData}
 * allocates 1 GiB (the operator exited under the chart's heap).
 */
class BoundedZkRegistryTest {
  private File dir;
  private ZooKeeperServer server;
  private ServerCnxnFactory factory;
  private ZooKeeper zk;

  @BeforeEach
  void start() throws Exception {
    dir = Files.createTempDirectory("tenant-zk").toFile();
    server = new ZooKeeperServer(dir, dir, 2000);
    factory = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 60);
    factory.startup(server);
    CountDownLatch up = new CountDownLatch(1);
    zk =
        new ZooKeeper(
            "127.0.0.1:" + factory.getLocalPort(),
            10_000,
            e -> {
              if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                up.countDown();
              }
            });
    assertThat(up.await(20, TimeUnit.SECONDS)).isTrue();
    put("/hbase", new byte[0]);
  }

  @AfterEach
  void stop() throws Exception {
    zk.close();
    factory.shutdown();
    server.shutdown();
  }

  @Test
  void theOperatorsClientFindsClustersThroughIt() {
    Configuration conf =
        AdminHBaseCluster.configuration(
            Map.of(
                "hbase.zookeeper.quorum",
                "127.0.0.1",
                "hbase.client.registry.impl",
                "org.apache.hadoop.hbase.client.ZKConnectionRegistry"),
            AdminHBaseCluster.Options.defaults());
    assertThat(conf.get("hbase.client.registry.impl")).isEqualTo(BoundedZkRegistry.class.getName());
  }

  @Test
  void aMetadataHeaderThatNamesMoreThanTheZnodeHoldsIsRefusedBeforeAnythingIsAllocated()
      throws Exception {
    put("/hbase/hbaseid", new byte[] {(byte) 0xFF, (byte) 0xC0, 0, 0, 0});
    try (BoundedZkRegistry r = registry()) {
      assertThatThrownBy(() -> r.getClusterId().get(20, TimeUnit.SECONDS))
          .hasMessageContaining("names an id of -1073741824 bytes in 5");
    }
    assertThatThrownBy(() -> BoundedZkRegistry.strip(new byte[] {(byte) 0xFF, 0, 0, 0, 9}))
        .hasMessageContaining("names an id of 9 bytes in 5");
    assertThat(BoundedZkRegistry.strip(new byte[] {(byte) 0xFF, 0, 0, 0, 1, 7, 'x'}))
        .containsExactly('x');
  }

  @Test
  void theMastersAndMetasZnodesAreReadAsHBaseWritesThem() throws Exception {
    put(
        "/hbase/master",
        znode(
            ZooKeeperProtos.Master.newBuilder()
                .setMaster(server("localhost", 16000, 5))
                .build()
                .toByteArray()));
    put(
        "/hbase/meta-region-server",
        znode(
            ZooKeeperProtos.MetaRegionServer.newBuilder()
                .setServer(server("127.0.0.1", 16020, 7))
                .build()
                .toByteArray()));
    // a replica the operator does not read: refused by its size, were it read
    put("/hbase/meta-region-server-1", new byte[BoundedZkRegistry.MAX_ZNODE + 1]);
    try (BoundedZkRegistry r = registry()) {
      assertThat(r.getActiveMaster().get(20, TimeUnit.SECONDS))
          .isEqualTo(ServerName.valueOf("localhost", 16000, 5));
      RegionLocations meta = r.getMetaRegionLocations().get(20, TimeUnit.SECONDS);
      assertThat(meta.size()).isEqualTo(1);
      assertThat(meta.getDefaultRegionLocation().getServerName())
          .isEqualTo(ServerName.valueOf("127.0.0.1", 16020, 7));
    }
  }

  /**
   * A name HBase's client would resolve on the event loop every connection shares is resolved on
   * the registry's own thread first; one that does not resolve is refused there, never asked.
   */
  @Test
  void aServerNameThatDoesNotResolveIsRefusedBeforeTheClientConnects() throws Exception {
    put(
        "/hbase/meta-region-server",
        znode(
            ZooKeeperProtos.MetaRegionServer.newBuilder()
                .setServer(server("rs-1.hbase.ns.invalid", 16020, 7))
                .build()
                .toByteArray()));
    try (BoundedZkRegistry r = registry()) {
      assertThatThrownBy(() -> r.getMetaRegionLocations().get(20, TimeUnit.SECONDS))
          .hasMessageContaining("rs-1.hbase.ns.invalid in ZooKeeper does not resolve");
    }
  }

  @Test
  void aHostNameLongerThanDnsAllowsIsRefused() throws Exception {
    put(
        "/hbase/master",
        znode(
            ZooKeeperProtos.Master.newBuilder()
                .setMaster(server("a".repeat(60_000), 16000, 5))
                .build()
                .toByteArray()));
    try (BoundedZkRegistry r = registry()) {
      assertThatThrownBy(() -> r.getActiveMaster().get(20, TimeUnit.SECONDS))
          .hasMessageContaining("a server name of 60000 characters");
    }
  }

  private BoundedZkRegistry registry() {
    Configuration conf = new Configuration(false);
    conf.set("hbase.zookeeper.quorum", "127.0.0.1");
    conf.set("hbase.zookeeper.property.clientPort", String.valueOf(factory.getLocalPort()));
    return new BoundedZkRegistry(conf, null);
  }

  private static HBaseProtos.ServerName server(String host, int port, long startCode) {
    return HBaseProtos.ServerName.newBuilder()
        .setHostName(host)
        .setPort(port)
        .setStartCode(startCode)
        .build();
  }

  /** As HBase writes a znode: metadata header (magic, id length, id), "PBUF", the protobuf. */
  private static byte[] znode(byte[] pb) {
    byte[] id = "id".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    var out = new java.io.ByteArrayOutputStream();
    out.write(0xFF);
    out.writeBytes(java.nio.ByteBuffer.allocate(4).putInt(id.length).array());
    out.writeBytes(id);
    out.writeBytes(new byte[] {'P', 'B', 'U', 'F'});
    out.writeBytes(pb);
    return out.toByteArray();
  }

  private void put(String path, byte[] data) throws Exception {
    zk.create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
  }
}
