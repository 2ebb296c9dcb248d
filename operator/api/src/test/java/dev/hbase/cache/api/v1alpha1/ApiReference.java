package dev.hbase.cache.api.v1alpha1;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * docs/reference/api.md, made from the generated CRD alone (so it says what the API server and
 * {@code kubectl explain} say): a table per object of the schema (field path, type, default,
 * description with enums, bounds and the CEL rules' messages). {@link CrdUpToDateTest} checks the
 * committed file and rewrites it with {@code -Dcrds.update=true} ({@code make crds}).
 */
final class ApiReference {
  private ApiReference() {}

  static String render(CustomResourceDefinition crd) {
    CustomResourceDefinitionVersion version = crd.getSpec().getVersions().get(0);
    JSONSchemaProps root = version.getSchema().getOpenAPIV3Schema();
    Map<String, JSONSchemaProps> objects = new LinkedHashMap<>();
    Map<String, String> descriptions = new LinkedHashMap<>();
    objects(".", root, null, objects, descriptions);
    var names = crd.getSpec().getNames();
    String cli = names.getShortNames().isEmpty() ? names.getPlural() : names.getShortNames().get(0);
    StringBuilder b = new StringBuilder();
    b.append("# ").append(names.getKind()).append(" API reference\n\n");
    b.append("<!-- Generated from crds/")
        .append(CrdUpToDateTest.FILE)
        .append(" by operator/api's ApiReference (CrdUpToDateTest); do not edit: `make crds`")
        .append(" rewrites it. -->\n\n");
    b.append("`apiVersion: ")
        .append(crd.getSpec().getGroup())
        .append('/')
        .append(version.getName())
        .append("`, `kind: ")
        .append(names.getKind())
        .append("`, ")
        .append(crd.getSpec().getScope().toLowerCase(Locale.ROOT))
        .append(", short name")
        .append(names.getShortNames().size() == 1 ? " " : "s ")
        .append(
            names.getShortNames().stream()
                .map(n -> "`" + n + "`")
                .collect(Collectors.joining(", ")))
        .append(".\n\n");
    b.append(text(root.getDescription())).append("\n\n");
    b.append("`kubectl explain ")
        .append(cli)
        .append(".spec.rollout` shows the same descriptions for any path below, written without")
        .append(" the `[]` that stands here for each item of a list (`")
        .append(cli)
        .append(".status.rollout.inFlight.step`).\n\n");
    for (String path : objects.keySet()) {
      b.append("- [`").append(heading(path)).append("`](#").append(anchor(path)).append(")\n");
    }
    b.append("- [kubectl get columns](#kubectl-get-columns)\n");
    objects.forEach((path, node) -> section(b, path, descriptions.get(path), node));
    columns(b, version.getAdditionalPrinterColumns());
    return b.toString();
  }

  /**
   * Every object with properties by path, depth first: a table each, described as its property (the
   * items of a list: as the list).
   */
  private static void objects(
      String path,
      JSONSchemaProps node,
      String description,
      Map<String, JSONSchemaProps> out,
      Map<String, String> descriptions) {
    if (isObject(node)) {
      out.put(path, node);
      descriptions.put(path, description);
      String prefix = path.equals(".") ? "" : path;
      node.getProperties()
          .forEach(
              (name, child) ->
                  objects(prefix + "." + name, child, child.getDescription(), out, descriptions));
    }
    if (node.getItems() != null && node.getItems().getSchema() != null) {
      objects(path + "[]", node.getItems().getSchema(), description, out, descriptions);
    }
  }

  private static void section(
      StringBuilder b, String path, String description, JSONSchemaProps node) {
    b.append("\n## `").append(heading(path)).append("`\n\n");
    if (description != null) {
      b.append(text(description)).append("\n\n");
    }
    b.append("| Field | Type | Default | Description |\n|---|---|---|---|\n");
    String prefix = path.equals(".") ? "" : path;
    node.getProperties()
        .forEach(
            (name, child) -> {
              String childPath = prefix + "." + name;
              boolean required = node.getRequired() != null && node.getRequired().contains(name);
              b.append("| `")
                  .append(childPath)
                  .append("` | ")
                  .append(type(childPath, child))
                  .append(" | ")
                  .append(child.getDefault() == null ? "" : code(value(child.getDefault())))
                  .append(" | ")
                  .append(description(child, required))
                  .append(" |\n");
            });
    List<ValidationRule> rules = node.getXKubernetesValidations();
    if (rules != null && !rules.isEmpty()) {
      b.append("\nValidation of `").append(heading(path)).append("` (CEL):\n\n");
      for (ValidationRule r : rules) {
        b.append("- ");
        if (r.getFieldPath() != null) {
          b.append(code(r.getFieldPath())).append(": ");
        }
        b.append(sentence(text(r.getMessage()))).append('\n');
      }
    }
  }

  private static void columns(StringBuilder b, List<CustomResourceColumnDefinition> columns) {
    b.append("\n## kubectl get columns\n\n");
    b.append("| Column | Path | Type | Shown |\n|---|---|---|---|\n");
    // in the CRD's order, which kubectl shows them in
    for (CustomResourceColumnDefinition c : columns) {
      b.append("| ")
          .append(text(c.getName()))
          .append(" | ")
          .append(code(c.getJsonPath()))
          .append(" | ")
          .append(c.getType())
          .append(" | ")
          .append(c.getPriority() != null && c.getPriority() > 0 ? "`-o wide`" : "always")
          .append(" |\n");
    }
  }

  /** The row's description: the schema's, then what the schema enforces besides. */
  private static String description(JSONSchemaProps p, boolean required) {
    List<String> parts = new ArrayList<>();
    if (required) {
      parts.add("**Required.**");
    }
    parts.add(text(p.getDescription()));
    if (p.getEnum() != null && !p.getEnum().isEmpty()) {
      parts.add(
          "One of "
              + p.getEnum().stream().map(e -> code(value(e))).collect(Collectors.joining(", "))
              + ".");
    }
    List<String> bounds = new ArrayList<>();
    if (p.getMinimum() != null) {
      bounds.add("minimum " + number(p.getMinimum()));
    }
    if (p.getMaximum() != null) {
      bounds.add("maximum " + number(p.getMaximum()));
    }
    if (p.getMinItems() != null) {
      bounds.add("at least " + p.getMinItems() + " items");
    }
    if (p.getMaxItems() != null) {
      bounds.add("at most " + p.getMaxItems() + " items");
    }
    if (p.getMaxLength() != null) {
      bounds.add("at most " + p.getMaxLength() + " characters");
    }
    JSONSchemaProps items = p.getItems() == null ? null : p.getItems().getSchema();
    if (items != null && items.getMaxLength() != null) {
      bounds.add("each item at most " + items.getMaxLength() + " characters");
    }
    if (p.getPattern() != null) {
      bounds.add("pattern " + code(p.getPattern()));
    }
    if (!bounds.isEmpty()) {
      String s = String.join(", ", bounds);
      parts.add(Character.toUpperCase(s.charAt(0)) + s.substring(1) + ".");
    }
    if (!isObject(p) && p.getXKubernetesValidations() != null) {
      for (ValidationRule r : p.getXKubernetesValidations()) {
        parts.add("Validation: " + sentence(text(r.getMessage())));
      }
    }
    return String.join(" ", parts);
  }

  private static String type(String path, JSONSchemaProps p) {
    if (isObject(p)) {
      return "[object](#" + anchor(path) + ")";
    }
    if (Boolean.TRUE.equals(p.getXKubernetesIntOrString())) {
      boolean quantity =
          p.getXKubernetesValidations() != null
              && p.getXKubernetesValidations().stream()
                  .anyMatch(r -> r.getRule().contains("isQuantity("));
      return quantity ? "quantity (e.g. `4Gi`)" : "integer or string";
    }
    if ("array".equals(p.getType())) {
      JSONSchemaProps items = p.getItems().getSchema();
      return isObject(items)
          ? "array of [object](#" + anchor(path + "[]") + ")"
          : "array of " + items.getType();
    }
    if ("object".equals(p.getType()) && p.getAdditionalProperties() != null) {
      return "map of string to " + p.getAdditionalProperties().getSchema().getType();
    }
    return p.getType();
  }

  private static boolean isObject(JSONSchemaProps p) {
    return p.getProperties() != null && !p.getProperties().isEmpty();
  }

  private static String heading(String path) {
    return path.equals(".") ? "BlockCachePolicy" : path;
  }

  /** GitHub's anchor for a heading: lower case, only letters, digits, '-' and '_' kept. */
  private static String anchor(String path) {
    return heading(path).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_-]", "");
  }

  private static String sentence(String s) {
    return s.endsWith(".") ? s : s + ".";
  }

  private static String value(JsonNode v) {
    return v.isTextual() ? v.asText() : v.toString();
  }

  private static String number(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }

  /** Inline code in a table cell: only the column separator needs escaping there. */
  private static String code(String s) {
    return "`" + s.replace("|", "\\|") + "`";
  }

  /** Prose in a table cell: Markdown's emphasis, escape and HTML characters taken literally. */
  private static String text(String s) {
    return s == null
        ? ""
        : s.replace("\\", "\\\\")
            .replace("*", "\\*")
            .replace("_", "\\_")
            .replace("|", "\\|")
            .replace("<", "&lt;")
            .replace("`", "\\`");
  }
}
