package dev.hbase.cache.operator.logging;

import ch.qos.logback.core.PropertyDefinerBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One of a few words, for logback.xml's {@code <define>}: a start-up setting (LOG_FORMAT,
 * LOG_LEVEL, LOG_ROOT_LEVEL) lower-cased and checked against its choices, its fallback when unset
 * or none of them. Without it a mistyped level would be read as DEBUG (logback's {@code
 * Level.toLevel} default) and a mistyped format would include no appender: nothing would be logged.
 *
 * <p>A mistyped setting is kept for {@link #mistakes()}, which the operator logs as a warning once
 * logging is up, in the chosen format. (A logback WARN status instead would make logback print its
 * whole configuration report to stdout, in the middle of {@code plan}'s output.)
 */
public final class Choice extends PropertyDefinerBase {
  private static final Queue<String> MISTAKES = new ConcurrentLinkedQueue<>();

  private String setting = "?";
  private String value;
  private List<String> choices = List.of();
  private String fallback;

  /** The environment variable the value comes from (for the warning). */
  public void setSetting(String setting) {
    this.setting = setting;
  }

  public void setValue(String value) {
    this.value = value;
  }

  /** The allowed words, separated by {@code |}. */
  public void setChoices(String choices) {
    this.choices = List.of(choices.toLowerCase(Locale.ROOT).split("\\|"));
  }

  public void setFallback(String fallback) {
    this.fallback = fallback;
  }

  @Override
  public String getPropertyValue() {
    String v = value == null ? "" : value.strip().toLowerCase(Locale.ROOT);
    if (v.isEmpty()) {
      return fallback;
    }
    if (choices.contains(v)) {
      return v;
    }
    String mistake =
        setting
            + "="
            + value
            + " is none of "
            + String.join(", ", choices)
            + ": "
            + fallback
            + " is used";
    addInfo(mistake);
    MISTAKES.add(mistake);
    return fallback;
  }

  /** The settings found mistyped since the last call (normally: at start-up). */
  public static List<String> mistakes() {
    List<String> out = new ArrayList<>();
    for (String m = MISTAKES.poll(); m != null; m = MISTAKES.poll()) {
      out.add(m);
    }
    return out;
  }
}
