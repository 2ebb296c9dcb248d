package dev.hbase.cache.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.plan.JvmOptions.Trust;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JvmOptionsTest {

  /** What tuning needs passes the default allow-list. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "-XX:MaxGCPauseMillis=50",
        "-XX:+ParallelRefProcEnabled",
        "-XX:-OmitStackTraceInFastThrow",
        "-XX:+UseStringDeduplication",
        "-XX:+AlwaysPreTouch",
        "-XX:G1HeapRegionSize=16m",
        "-XX:+UnlockExperimentalVMOptions",
        "-XX:G1NewSizePercent=20",
        "-XX:ReservedCodeCacheSize=256m",
        "-XX:MaxMetaspaceSize=512m",
        "-XX:NativeMemoryTracking=summary",
        "-XX:+PrintFlagsFinal",
        "-Xss1m",
        "-verbose:gc",
        "-Xlog:gc*",
        "-Xlog:gc*,safepoint:stdout:time,uptime",
        "-Xlog:gc:stderr",
        "-Djava.net.preferIPv4Stack=true",
        "-Duser.timezone=UTC",
        "-Dio.netty.leakDetection.level=disabled",
        "-Dorg.apache.hbase.thirdparty.io.netty.leakDetection.level=paranoid"
      })
  void tuningPasses(String option) {
    assertThat(JvmOptions.refusal(option, Trust.ALLOW_LIST)).as(option).isEmpty();
  }

  /** Options that run commands, load code, write or read files: refused by default. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "-XX:OnError=/bin/sh",
        "-XX:OnOutOfMemoryError=/tmp/x",
        "-XX:HeapDumpPath=/var/lib/hbase/bucketcache/bucketcache.map",
        "-XX:+HeapDumpOnOutOfMemoryError",
        "-XX:ErrorFile=/var/lib/hbase/bucketcache/x",
        "-XX:Flags=/tmp/flags",
        "-XX:VMOptionsFile=/tmp/opts",
        "-XX:CompileCommandFile=/tmp/cc",
        "-XX:StartFlightRecording=filename=/tmp/x.jfr",
        "-Xlog:gc:file=/var/lib/hbase/bucketcache/bucketcache.map",
        "-Xlog:gc:/tmp/gc.log",
        "-Xlog:gc:stdout:time:filecount=5",
        "-javaagent:/tmp/a.jar",
        "-agentlib:jdwp=transport=dt_socket,server=y,address=*:5005",
        "-Xbootclasspath/a:/tmp/x.jar",
        "-Djava.security.manager=allow",
        "-Djava.library.path=/tmp",
        "-Djavax.net.ssl.trustStore=/tmp/ts",
        "-Djdk.attach.allowAttachSelf=true",
        "-Dsun.misc.unsafe=1",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-Dlog4j.configurationFile=http://x/log4j2.xml",
        "-Dlog4j2.configurationFile=/tmp/l.xml",
        "-Dhbase.log.dir=/var/lib/hbase/bucketcache",
        "-DLOG4J2_CONFIGURATION_FILE=https://x/l.xml",
        "-DLog4j2.configurationFile=/tmp/l.xml",
        "-DLOG4J_CONTEXT_SELECTOR=evil.Selector",
        "-Dhbase.rootdir=hdfs://attacker/x",
        "-Dhbase.dynamic.jars.dir=hdfs://attacker/lib",
        "-Dorg.apache.hbase.thirdparty.io.netty.maxDirectMemory=68719476736",
        "-Dio.netty.maxDirectMemory=68719476736",
        "-DHADOOP_USER_NAME=hdfs",
        "-Dzookeeper.clientCnxnSocket=evil.Socket",
        "-Dzookeeper.ssl.trustStore.location=/etc/shadow",
        "-Dhbase.security.log.file=../../x",
        "-XX:+CrashOnOutOfMemoryError",
        "-Xint",
        "-cp",
        "-jar"
      })
  void whatRunsLoadsOrWritesIsRefused(String option) {
    assertThat(JvmOptions.refusal(option, Trust.ALLOW_LIST))
        .as(option)
        .hasValueSatisfying(why -> assertThat(why).contains(option));
  }

  /** Shell metacharacters and what the planner sizes: refused at every trust level. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "-XX:OnOutOfMemoryError=kill${IFS}-9${IFS}%p",
        "-Dx=`id`",
        "-Dx=$(id)",
        "-Dx=a;b",
        "-Dx=1 -Xmx64g",
        "-Dx='a'",
        "Xmx64g",
        "-",
        "",
        "-Xmx8g",
        "-Xms8g",
        "-XX:MaxHeapSize=64g",
        "-XX:InitialHeapSize=1g",
        "-XX:MaxRAMPercentage=90",
        "-XX:MaxRAM=64g",
        "-XX:MaxDirectMemorySize=64g",
        "-Dsun.nio.MaxDirectMemorySize=64g",
        "-XX:-UseContainerSupport",
        "-XX:-ExitOnOutOfMemoryError",
        "-Dsun.net.inetaddr.ttl=3600",
        "-XX:+UseParallelGC",
        "-XX:+UseSerialGC",
        "-XX:+UseShenandoahGC",
        "-XX:-UseG1GC"
      })
  void refusedAtEveryTrustLevel(String option) {
    for (Trust t : Trust.values()) {
      assertThat(JvmOptions.refusal(option, t)).as("%s at %s", option, t).isPresent();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"-javaagent:/opt/jmx.jar=9404:/opt/c.yml", "-Xbootclasspath/a:/x.jar"})
  void agentsWithAllowJvmAgents(String option) {
    assertThat(JvmOptions.refusal(option, Trust.AGENTS)).isEmpty();
    assertThat(JvmOptions.refusal(option, Trust.ALLOW_LIST))
        .hasValueSatisfying(why -> assertThat(why).contains("allowJvmAgents=true"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "-XX:+HeapDumpOnOutOfMemoryError",
        "-XX:HeapDumpPath=/var/log/hbase",
        "-Xlog:gc:file=/var/log/hbase/gc.log",
        "-Djavax.net.ssl.trustStore=/etc/ssl/ts.jks"
      })
  void anyOptionWithTheEscapeHatch(String option) {
    assertThat(JvmOptions.refusal(option, Trust.ANY)).isEmpty();
    assertThat(JvmOptions.refusal(option, Trust.AGENTS))
        .hasValueSatisfying(why -> assertThat(why).contains("allowAnyJvmOptions=true"));
  }

  @org.junit.jupiter.api.Test
  void trustFromTheChartsSwitches() {
    assertThat(Trust.of(false, false)).isEqualTo(Trust.ALLOW_LIST);
    assertThat(Trust.of(true, false)).isEqualTo(Trust.AGENTS);
    assertThat(Trust.of(false, true)).isEqualTo(Trust.ANY);
    assertThat(Trust.of(true, true)).isEqualTo(Trust.ANY);
  }
}
