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
          "self.all(o, !o.startsWith('-Xmx') && !o.startsWith('-Xms')"
              + " && !o.startsWith('-XX:MaxDirectMemorySize') && !o.startsWith('-XX:+Use')"
              + " && !o.contains('GC '))",
      message =
          "jvm.extraOptions must not set -Xmx, -Xms, -XX:MaxDirectMemorySize or the collector:"
              + " the planner sizes them from memory.* and jvm.gc")
  @ValidationRule(
      value = "self.all(o, o.startsWith('-') && !o.matches('\\\\s'))",
      message =
          "each jvm.extraOptions item must be one JVM option starting with '-', without spaces:"
              + " write each option as its own item")
  @JsonPropertyDescription(
      "Extra JVM options appended for the RegionServer, one option per item. Agents and boot class"
          + " path changes (-javaagent, -agentpath, -agentlib, -Xbootclasspath) are refused unless"
          + " the operator runs with allowJvmAgents (its chart's value): they run code in every"
          + " RegionServer.")
  private List<@Size(max = 512) String> extraOptions;
}
