package dev.hbase.cache.hbaseit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The stop-the-world pauses a JVM logged with {@link #option}: JDK unified logging, one line per
 * collection, "[2026-11-24T06:50:00.123+0000] GC(3) Pause Young (Normal) (G1 Evacuation Pause)
 * 24M->6M(256M) 3.204ms". Benchmarks only.
 */
final class GcLog {

  private static final Pattern PAUSE =
      Pattern.compile("^\\[([^\\]]+)\\].*\\bPause\\b.*?(\\d+\\.\\d+)ms\\s*$");
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");

  private GcLog() {}

  /** The JVM option that writes the log this class reads. */
  static String option(Path file) {
    return "-Xlog:gc:file=" + file + ":utctime";
  }

  /** Pauses that ended in [from, to): count, total, p99 and max in ms. */
  static Map<String, Object> pauses(Path file, Instant from, Instant to) throws IOException {
    double[] ms =
        Files.readAllLines(file).stream()
            .map(PAUSE::matcher)
            .filter(Matcher::matches)
            .filter(
                m -> {
                  Instant at = OffsetDateTime.parse(m.group(1), TIME).toInstant();
                  return !at.isBefore(from) && at.isBefore(to);
                })
            .mapToDouble(m -> Double.parseDouble(m.group(2)))
            .sorted()
            .toArray();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("gcPauses", ms.length);
    out.put("gcPauseTotalMillis", java.util.Arrays.stream(ms).sum());
    out.put(
        "gcPauseP99Millis",
        ms.length == 0 ? 0.0 : ms[Math.max(0, (int) Math.ceil(0.99 * ms.length) - 1)]);
    out.put("gcPauseMaxMillis", ms.length == 0 ? 0.0 : ms[ms.length - 1]);
    return out;
  }
}
