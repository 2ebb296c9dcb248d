package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator chart's values reference: every key of {@code values.schema.json} has a description,
 * and the table in the chart's README (between {@code <!-- values:begin -->} and {@code <!--
 * values:end -->}) is what the schema and {@code values.yaml} make: key, type, default,
 * description. {@code make crds} rewrites the table ({@code -Dcrds.update=true}); a stale one fails
 * here ({@code make test}).
 */
class ChartValuesReferenceTest {
  static final String BEGIN =
      "<!-- values:begin (generated from values.schema.json and values.yaml: make crds) -->";
  static final String END = "<!-- values:end -->";
  static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static Path chart() {
    return Path.of(System.getProperty("docs.dir"))
        .getParent()
        .resolve("charts/hbase-cache-operator");
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> schema() throws Exception {
    return SERIALIZATION.unmarshal(
        Files.readString(chart().resolve("values.schema.json")), Map.class);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> values() throws Exception {
    return SERIALIZATION.unmarshal(Files.readString(chart().resolve("values.yaml")), Map.class);
  }

  /** Each schema property as (path, node), depth first in the schema's order. */
  @SuppressWarnings("unchecked")
  static void walk(
      Map<String, Object> node, String path, List<Map.Entry<String, Map<String, Object>>> out) {
    Object props = node.get("properties");
    if (!(props instanceof Map)) {
      return;
    }
    for (Map.Entry<String, Object> e : ((Map<String, Object>) props).entrySet()) {
      String p = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
      Map<String, Object> child = (Map<String, Object>) e.getValue();
      out.add(Map.entry(p, child));
      walk(child, p, out);
    }
  }

  static List<Map.Entry<String, Map<String, Object>>> keys() throws Exception {
    List<Map.Entry<String, Map<String, Object>>> out = new ArrayList<>();
    walk(schema(), "", out);
    return out;
  }

  @SuppressWarnings("unchecked")
  static Object defaultOf(String path) throws Exception {
    Object v = values();
    for (String k : path.split("\\.")) {
      if (!(v instanceof Map)) {
        return null;
      }
      v = ((Map<String, Object>) v).get(k);
    }
    return v;
  }

  static String render() throws Exception {
    StringBuilder b = new StringBuilder(BEGIN).append('\n');
    b.append("| key | type | default | description |\n|---|---|---|---|\n");
    for (Map.Entry<String, Map<String, Object>> e : keys()) {
      Map<String, Object> n = e.getValue();
      Object type = n.containsKey("enum") ? "one of " + n.get("enum") : n.getOrDefault("type", "");
      Object def = defaultOf(e.getKey());
      String shown = def instanceof Map || def == null ? "" : "`" + SERIALIZATION.asJson(def) + "`";
      b.append("| `")
          .append(e.getKey())
          .append("` | ")
          .append(cell(String.valueOf(type)))
          .append(" | ")
          .append(cell(shown))
          .append(" | ")
          .append(cell(String.valueOf(n.getOrDefault("description", ""))))
          .append(" |\n");
    }
    return b.append(END).toString();
  }

  static String cell(String s) {
    return s.replace("|", "\\|").replace("\n", " ");
  }

  @Test
  void everyValueIsDescribed() throws Exception {
    List<String> bare =
        keys().stream()
            .filter(e -> String.valueOf(e.getValue().getOrDefault("description", "")).isBlank())
            .map(Map.Entry::getKey)
            .toList();
    assertThat(bare).as("values.schema.json keys without a description").isEmpty();
    assertThat(keys()).as("the schema has keys").hasSizeGreaterThan(50);
  }

  @Test
  void chartReadmeTableIsCurrent() throws Exception {
    Path readme = chart().resolve("README.md");
    String text = Files.readString(readme);
    int from = text.indexOf(BEGIN);
    int to = text.indexOf(END);
    assertThat(from).as("%s has no %s marker", readme, BEGIN).isNotNegative();
    assertThat(to).as("%s has no %s marker", readme, END).isGreaterThan(from);
    String current = text.substring(from, to + END.length());
    String generated = render();
    if (Boolean.getBoolean("crds.update")) {
      Files.writeString(readme, text.replace(current, generated));
      current = generated;
    }
    assertThat(current)
        .as("the values table of charts/hbase-cache-operator/README.md is stale: run `make crds`")
        .isEqualTo(generated);
  }
}
