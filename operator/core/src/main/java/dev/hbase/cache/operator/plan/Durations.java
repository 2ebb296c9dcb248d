package dev.hbase.cache.operator.plan;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go-style durations as Kubernetes users write them: "30s", "10m", "1h30m", "500ms". */
public final class Durations {
  private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)");

  private Durations() {}

  public static Duration parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("empty duration");
    }
    Matcher m = PART.matcher(text);
    int pos = 0;
    double millis = 0;
    while (m.find()) {
      if (m.start() != pos) {
        break;
      }
      double v = Double.parseDouble(m.group(1));
      millis +=
          switch (m.group(2)) {
            case "ms" -> v;
            case "s" -> v * 1000;
            case "m" -> v * 60_000;
            default -> v * 3_600_000;
          };
      pos = m.end();
    }
    if (pos != text.length()) {
      throw new IllegalArgumentException(
          "\"" + text + "\" is not a duration like 30s, 10m or 1h30m");
    }
    return Duration.ofMillis(Math.round(millis));
  }

  public static Duration parse(String text, String fallback) {
    return parse(text == null ? fallback : text);
  }

  /** The way a person writes it (and {@link #parse} reads it): "10m", "1h30m", "45s", "500ms". */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    StringBuilder b = new StringBuilder();
    long h = ms / 3_600_000;
    long m = ms / 60_000 % 60;
    long sMillis = ms % 60_000;
    if (h > 0) {
      b.append(h).append('h');
    }
    if (m > 0) {
      b.append(m).append('m');
    }
    if (sMillis > 0) {
      b.append(
              sMillis % 1000 == 0
                  ? Long.toString(sMillis / 1000)
                  : java.math.BigDecimal.valueOf(sMillis, 3).stripTrailingZeros().toPlainString())
          .append('s');
    }
    return b.toString();
  }
}
