package dev.hbase.cache.operator.render;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/**
 * Hadoop-style configuration XML (hbase-site.xml): read into a map, overlay, write back.
 *
 * <p>What Hadoop's {@code Configuration} reads of a property besides its name and value ({@code
 * <final>}, {@code <source>}, {@code <tag>}; {@code <description>} too, which it ignores) is kept:
 * each property's other elements, in file order, are written back after its value ({@link
 * Property#extras}). A file without them renders byte for byte as before, so the revision of the
 * pods (a hash of the derived file) does not change on upgrade.
 */
public final class SiteXml {
  private SiteXml() {}

  /**
   * A property's elements besides name and value that are written back: what Hadoop's {@code
   * Configuration} reads ({@code final}, {@code source}, {@code tag}) and {@code description}.
   */
  static final Set<String> KEPT = Set.of("final", "source", "tag", "description");

  /**
   * One property of the file.
   *
   * @param value its value
   * @param extras its other child elements (final, source, tag, description), in file order, as
   *     element name and text
   */
  public record Property(String value, List<Map.Entry<String, String>> extras) {
    public Property {
      extras = List.copyOf(extras);
    }

    static Property of(String value) {
      return new Property(value, List.of());
    }

    Property withValue(String v) {
      return new Property(v, extras);
    }
  }

  /** Properties in file order. Throws IllegalArgumentException with the parser's reason. */
  public static Map<String, String> parse(String xml) {
    Map<String, String> out = new LinkedHashMap<>();
    properties(xml).forEach((k, p) -> out.put(k, p.value()));
    return out;
  }

  /**
   * Properties in file order, each with its other elements. A name given twice keeps its first
   * place and its last value, as Hadoop's {@code Configuration} reads it (unless the first is
   * final: then the first, as Hadoop keeps a final value).
   */
  public static Map<String, Property> properties(String xml) {
    Map<String, Property> props = new LinkedHashMap<>();
    if (xml == null || xml.isBlank()) {
      return props;
    }
    try {
      DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
      f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      f.setExpandEntityReferences(false);
      Document doc = f.newDocumentBuilder().parse(new InputSource(new StringReader(xml)));
      NodeList list = doc.getElementsByTagName("property");
      for (int i = 0; i < list.getLength(); i++) {
        Element p = (Element) list.item(i);
        String name = text(p, "name");
        if (name == null) {
          continue;
        }
        String value = text(p, "value") == null ? "" : text(p, "value").trim();
        List<Map.Entry<String, String>> extras = new ArrayList<>();
        for (Node c = p.getFirstChild(); c != null; c = c.getNextSibling()) {
          if (c instanceof Element e && KEPT.contains(e.getTagName())) {
            extras.add(Map.entry(e.getTagName(), e.getTextContent().trim()));
          }
        }
        Property before = props.get(name.trim());
        if (before == null || !isFinal(before)) {
          props.put(name.trim(), new Property(value, extras));
        }
      }
      return props;
    } catch (Exception e) {
      throw new IllegalArgumentException("hbase-site.xml does not parse: " + e.getMessage(), e);
    }
  }

  /** Whether the property is marked {@code <final>true</final>}. */
  public static boolean isFinal(Property p) {
    return p.extras().stream()
        .anyMatch(e -> e.getKey().equals("final") && e.getValue().equalsIgnoreCase("true"));
  }

  /** The base configuration with {@code removed} keys dropped and {@code overlay} keys set. */
  public static Map<String, String> overlay(
      Map<String, String> base, Map<String, String> overlay, Set<String> removed) {
    Map<String, String> out = new LinkedHashMap<>(base);
    removed.forEach(out::remove);
    out.putAll(overlay);
    return out;
  }

  /**
   * The same on the file's properties: a key the overlay sets keeps its other elements (a {@code
   * <final>} stays on it).
   */
  public static Map<String, Property> overlayProperties(
      Map<String, Property> base, Map<String, String> overlay, Set<String> removed) {
    Map<String, Property> out = new LinkedHashMap<>(base);
    removed.forEach(out::remove);
    overlay.forEach(
        (k, v) -> out.put(k, out.containsKey(k) ? out.get(k).withValue(v) : Property.of(v)));
    return out;
  }

  /** Deterministic XML: same map, same bytes. */
  public static String render(Map<String, String> props, String comment) {
    Map<String, Property> p = new LinkedHashMap<>();
    props.forEach((k, v) -> p.put(k, Property.of(v)));
    return renderProperties(p, comment);
  }

  /** Deterministic XML with each property's other elements after its value. */
  public static String renderProperties(Map<String, Property> props, String comment) {
    StringBuilder b = new StringBuilder();
    b.append("<?xml version=\"1.0\"?>\n");
    b.append("<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n");
    if (comment != null) {
      b.append("<!-- ").append(comment.replace("--", "- -")).append(" -->\n");
    }
    b.append("<configuration>\n");
    props.forEach(
        (k, p) -> {
          b.append("  <property>\n    <name>")
              .append(escape(k))
              .append("</name>\n    <value>")
              .append(escape(p.value()))
              .append("</value>\n");
          p.extras()
              .forEach(
                  e ->
                      b.append("    <")
                          .append(e.getKey())
                          .append('>')
                          .append(escape(e.getValue()))
                          .append("</")
                          .append(e.getKey())
                          .append(">\n"));
          b.append("  </property>\n");
        });
    b.append("</configuration>\n");
    return b.toString();
  }

  private static String text(Element parent, String tag) {
    NodeList l = parent.getElementsByTagName(tag);
    if (l.getLength() == 0) {
      return null;
    }
    Node n = l.item(0);
    return n.getTextContent();
  }

  private static String escape(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
