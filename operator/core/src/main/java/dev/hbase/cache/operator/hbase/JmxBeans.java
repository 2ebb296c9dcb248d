package dev.hbase.cache.operator.hbase;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.util.Set;

/**
 * Finds one bean in a {@code /jmx} answer ({@code {"beans": [{"name": ..., ...}, ...]}}) as a
 * stream, keeping only the attributes asked for: what a scrape holds is those few values, whatever
 * the info server sends (the answer is the tenant's; a whole tree of an answer of {@code {}}s takes
 * ~28 times its size in heap, measured with Jackson 2.19). Values not asked for are skipped unread
 * (a long string is never materialized), nested objects and arrays skipped whole; reading stops at
 * the end of the bean asked for.
 */
final class JmxBeans {
  private static final ObjectMapper JSON = new ObjectMapper();

  private JmxBeans() {}

  /**
   * The bean named {@code name}, with those of {@code attributes} it has as scalar values (and
   * {@code name}).
   *
   * @throws IOException not JSON, no {@code beans} array, or no such bean
   */
  static ObjectNode find(InputStream in, String name, Set<String> attributes) throws IOException {
    try (JsonParser p = JSON.createParser(in)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new IOException("the JMX answer is not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        boolean beans = "beans".equals(p.currentName());
        JsonToken value = p.nextToken();
        if (!beans) {
          p.skipChildren();
          continue;
        }
        if (value != JsonToken.START_ARRAY) {
          break;
        }
        while (p.nextToken() != JsonToken.END_ARRAY) {
          if (p.currentToken() != JsonToken.START_OBJECT) {
            p.skipChildren();
            continue;
          }
          ObjectNode bean = bean(p, attributes);
          if (bean != null && name.equals(bean.path("name").asText(null))) {
            return bean;
          }
        }
        throw new IOException(
            "no bean " + name + " in the JMX answer (not a RegionServer info port?)");
      }
      throw new IOException("no \"beans\" array in the JMX answer");
    }
  }

  /** One bean object, the parser on its START_OBJECT: its name and the scalars asked for. */
  private static ObjectNode bean(JsonParser p, Set<String> attributes) throws IOException {
    ObjectNode bean = JSON.createObjectNode();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      if (t.isStructStart()) {
        p.skipChildren();
      } else if (field.equals("name") || attributes.contains(field)) {
        bean.set(field, (JsonNode) p.readValueAsTree()); // as a whole tree would hold it
      }
    }
    return bean;
  }
}
