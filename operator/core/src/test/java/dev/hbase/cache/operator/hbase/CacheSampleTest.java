package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Parsing of /jmx answers captured from real HBase 2.6.4 RegionServers (operator/hbase-it). */
class CacheSampleTest {

  static final Instant AT = Instant.parse("2026-11-21T07:36:30Z");

  static String resource(String name) throws IOException {
    try (InputStream in = CacheSampleTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void persistentFileRegionServer() throws IOException {
    // a PersistentFile RS after 200 gets of distinct cold blocks, then the same 200 gets again
    CacheSample s =
        CacheSample.fromJmxJson(resource("jmx-regionserver-2.6.4-persistentfile.json"), AT);

    assertThat(s.at()).isEqualTo(AT);
    assertThat(s.regionCount()).as("regionCount").isEqualTo(4);
    assertThat(s.startTime()).isEqualTo(1795246571123L);
    assertThat(s.serverName()).isEqualTo("127.0.0.1,36315,1795246571123");
    assertThat(s.data()).isEqualTo(new HitCounts(200, 400));
    assertThat(s.all()).isEqualTo(new HitCounts(599, 406));
    assertThat(s.l1()).isEqualTo(new HitCounts(398, 4));
    assertThat(s.l2()).isEqualTo(new HitCounts(201, 402));
    assertThat(s.l1UsedBytes()).isEqualTo(156296);
    assertThat(s.l1FreeBytes()).isEqualTo(120639664);
    assertThat(s.l2UsedBytes()).isEqualTo(13378560);
    assertThat(s.l2FreeBytes()).isEqualTo(387959808);
    assertThat(s.l2CapacityBytes()).isEqualTo(401338368L); // planned 384 MiB = 402653184
    assertThat(s.hasL2()).isTrue();
    assertThat(s.blockCount()).isEqualTo(203);
    assertThat(s.dataBlockCount()).isEqualTo(201);
    assertThat(s.evictions()).isZero();
    assertThat(s.failedInsertions()).isZero();
  }

  @Test
  void lruRegionServerHasNoL2() throws IOException {
    CacheSample s = CacheSample.fromJmxJson(resource("jmx-regionserver-2.6.4-lru.json"), AT);

    assertThat(s.hasL2()).isFalse();
    assertThat(s.l2()).isEqualTo(HitCounts.ZERO);
    assertThat(s.data()).isEqualTo(new HitCounts(200, 200));
    assertThat(s.l1CapacityBytes()).isEqualTo(13930392L + 576627624L);
  }

  @Test
  void answerWithoutTheServerBeanIsAClearError() {
    assertThatThrownBy(() -> CacheSample.fromJmxJson("{\"beans\":[]}", AT))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("no bean Hadoop:service=HBase,name=RegionServer,sub=Server");
    assertThatThrownBy(() -> CacheSample.fromJmxJson("<html>", AT)).isInstanceOf(IOException.class);
    assertThatThrownBy(
            () ->
                CacheSample.fromJmxJson(
                    "{\"beans\":[{\"name\":\"Hadoop:service=HBase,name=RegionServer,sub=Server\"}]}",
                    AT))
        .hasMessageContaining("regionServerStartTime");
  }

  @Test
  void uriOfAnInfoPort() {
    assertThat(JmxScraper.uri("rs-0.hbase.ns.svc", 16030).toString())
        .isEqualTo(
            "http://rs-0.hbase.ns.svc:16030/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server");
    assertThat(JmxScraper.uri("::1", 16030).getHost()).isEqualTo("[::1]");
  }
}
