package dev.hbase.cache.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The derived hbase-site keeps what HBase reads of the base one. */
class SiteXmlTest {

  static final String BASE =
      "<?xml version=\"1.0\"?>\n<configuration>\n"
          + "  <property><name>hbase.zookeeper.quorum</name><value>zk-0</value>"
          + "<final>true</final><source>ops</source></property>\n"
          + "  <property><name>hbase.rootdir</name><value>hdfs://nn/hbase</value>"
          + "<description>where HFiles live</description></property>\n"
          + "  <property><name>hfile.block.cache.size</name><value>0.2</value>"
          + "<final>true</final></property>\n"
          + "</configuration>\n";

  @Test
  void finalAndTheOtherElementsHadoopReadsSurviveTheOverlay() throws Exception {
    Map<String, String> data =
        Desired.siteData(
            Map.of(Desired.SITE_FILE, BASE),
            Map.of("hfile.block.cache.size", "0.1", "hbase.bucketcache.size", "1024"),
            Set.of(),
            "derived");
    String xml = data.get(Desired.SITE_FILE);
    // what Hadoop's own Configuration reads of the derived file
    org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration(false);
    conf.addResource(new java.io.ByteArrayInputStream(xml.getBytes("UTF-8")), "derived");
    assertThat(conf.get("hbase.zookeeper.quorum")).isEqualTo("zk-0");
    assertThat(conf.getFinalParameters())
        .contains("hbase.zookeeper.quorum", "hfile.block.cache.size");
    assertThat(conf.getPropertySources("hbase.zookeeper.quorum")).contains("ops");
    assertThat(conf.get("hfile.block.cache.size")).isEqualTo("0.1");
    assertThat(conf.get("hbase.bucketcache.size")).isEqualTo("1024");
    assertThat(xml).contains("<description>where HFiles live</description>");
    // deterministic
    assertThat(
            Desired.siteData(
                    Map.of(Desired.SITE_FILE, BASE),
                    Map.of("hbase.bucketcache.size", "1024", "hfile.block.cache.size", "0.1"),
                    Set.of(),
                    "derived")
                .get(Desired.SITE_FILE))
        .isEqualTo(xml);
  }

  @Test
  void aFileWithoutOtherElementsRendersAsBefore() {
    String plain =
        "<configuration><property><name>a</name><value>1</value></property></configuration>";
    Map<String, String> props = SiteXml.parse(plain);
    assertThat(SiteXml.renderProperties(SiteXml.properties(plain), "c"))
        .isEqualTo(SiteXml.render(props, "c"))
        .isEqualTo(
            "<?xml version=\"1.0\"?>\n"
                + "<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n"
                + "<!-- c -->\n<configuration>\n  <property>\n    <name>a</name>\n"
                + "    <value>1</value>\n  </property>\n</configuration>\n");
  }

  @Test
  void aFinalValueIsNotReplacedByALaterOneInTheSameFile() {
    String twice =
        "<configuration><property><name>a</name><value>1</value><final>true</final></property>"
            + "<property><name>a</name><value>2</value></property></configuration>";
    assertThat(SiteXml.parse(twice)).containsEntry("a", "1");
  }
}
