package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class JvmSpec {
  public enum Gc {
    G1,
    ZGC
  }

  @Default("G1")
  @JsonPropertyDescription("G1 (default) or ZGC.")
  private Gc gc;

  @Size(max = 64)
  @ValidationRule(
      value =
          "self.all(o, !(o.startsWith('-Xmx') || o.startsWith('-Xms')"
              + " || o.startsWith('-XX:MaxHeapSize') || o.startsWith('-XX:InitialHeapSize')"
              + " || o.startsWith('-XX:MinHeapSize') || o.startsWith('-XX:MaxRAM')"
              + " || o.startsWith('-XX:InitialRAM') || o.startsWith('-XX:MinRAM')"
              + " || o.startsWith('-XX:MaxDirectMemorySize') || o.startsWith('-XX:+UseContainerSupport')"
              + " || o.startsWith('-XX:-UseContainerSupport') || o.startsWith('-XX:-ExitOnOutOfMemoryError')"
              + " || o.startsWith('-Dsun.nio.MaxDirectMemorySize') || o.startsWith('-Dsun.net.inetaddr.')"
              + " || o.matches('^-XX:[+-]Use[A-Za-z0-9]*GC$')))",
      message =
          "jvm.extraOptions must not set what the planner sizes: heap (-Xmx, -Xms, -XX:MaxHeapSize,"
              + " -XX:InitialHeapSize, -XX:MinHeapSize), RAM detection (-XX:MaxRAM*, -XX:InitialRAM*,"
              + " -XX:MinRAM*, UseContainerSupport), direct memory (-XX:MaxDirectMemorySize,"
              + " -Dsun.nio.MaxDirectMemorySize), the OOM exit, the DNS cache (-Dsun.net.inetaddr.*)"
              + " or the collector (-XX:+Use...GC): use memory.* and jvm.gc")
  @ValidationRule(
      value = "self.all(o, o.matches('^-[A-Za-z0-9_.,:+=/%*@-]+$'))",
      message =
          "each jvm.extraOptions item must be one JVM option: '-' then letters, digits and"
              + " _ . , : + = / % * @ - only (no spaces, quotes or $): write each option as its own"
              + " item")
  @JsonPropertyDescription(
      "Extra JVM options appended for the RegionServer, one option per item, from the operator's"
          + " allow-list: -XX flags of the collectors, the JIT, metaspace and threads; -Xss;"
          + " -verbose:gc; -Xlog to stdout or stderr; the -D system properties"
          + " java.net.preferIPv4Stack, java.net.preferIPv6Addresses, user.timezone, file.encoding"
          + " and Netty's leakDetection.level. Options that run commands, load code or write files"
          + " (-XX:OnError, -XX:OnOutOfMemoryError, -XX:HeapDumpPath, -Xlog:...:file=, agents) are"
          + " refused unless the operator was installed with allowJvmAgents (agents) or"
          + " allowAnyJvmOptions (any option). What the planner sizes (heap, direct memory, the"
          + " collector) is always refused.")
  private List<@Size(max = 512) String> extraOptions;
}
