package dev.hbase.cache.operator.render;

import java.io.StringReader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

/** Hadoop-style configuration XML (hbase-site.xml): read into a map, overlay, write back. */
public final class SiteXml {
  private SiteXml() {}

  /** Properties in file order. Throws IllegalArgumentException with the parser's reason. */
  public static Map<String, String> parse(String xml) {
    Map<String, String> props = new LinkedHashMap<>();
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
        if (name != null) {
          props.put(name.trim(), text(p, "value") == null ? "" : text(p, "value").trim());
        }
      }
      return props;
    } catch (Exception e) {
      throw new IllegalArgumentException("hbase-site.xml does not parse: " + e.getMessage(), e);
    }
  }

  /** The base configuration with {@code removed} keys dropped and {@code overlay} keys set. */
  public static Map<String, String> overlay(
      Map<String, String> base, Map<String, String> overlay, Set<String> removed) {
    Map<String, String> out = new LinkedHashMap<>(base);
    removed.forEach(out::remove);
    out.putAll(overlay);
    return out;
  }

  /** Deterministic XML: same map, same bytes. */
  public static String render(Map<String, String> props, String comment) {
    StringBuilder b = new StringBuilder();
    b.append("<?xml version=\"1.0\"?>\n");
    b.append("<?xml-stylesheet type=\"text/xsl\" href=\"configuration.xsl\"?>\n");
    if (comment != null) {
      b.append("<!-- ").append(comment.replace("--", "- -")).append(" -->\n");
    }
    b.append("<configuration>\n");
    props.forEach(
        (k, v) ->
            b.append("  <property>\n    <name>")
                .append(escape(k))
                .append("</name>\n    <value>")
                .append(escape(v))
                .append("</value>\n  </property>\n"));
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
