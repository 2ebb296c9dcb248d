package dev.hbase.cache.hbaseit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How long each region move of a roll took, from the master's own log: HBase logs every finished
 * move procedure ({@code TransitRegionStateProcedure ... REOPEN/MOVE in N msec}): from the master
 * sending the close to the region open on its target and recorded in hbase:meta. That is the time
 * reads of the region wait (the client retries until it finds the region open); a warm-up on the
 * target before the move is not part of it (the region is served meanwhile).
 */
final class RegionMoves {

  /** One finished move: when it finished, how long it took, and whether it was a drain's. */
  record Move(Instant finished, long millis, boolean drain) {}

  /** p50 and max of some moves' durations, and how many. */
  record Summary(int count, long p50Millis, long maxMillis) {
    @Override
    public String toString() {
      return count == 0
          ? "none"
          : String.format(Locale.ROOT, "%d, p50 %d ms, max %d ms", count, p50Millis, maxMillis);
    }
  }

  private static final Pattern FINISHED =
      Pattern.compile(
          "^(\\S+) .*Finished pid=\\d+, (?:ppid=\\d+, )?state=SUCCESS[^;]*;"
              + " TransitRegionStateProcedure .*REOPEN/MOVE in (.+)$");

  /** One part of HBase's humanTimeDiff ("1 hrs, 2 mins, 3.456 sec", "345 msec"). */
  private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?) (hrs|mins|sec|msec)");

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss,SSS", Locale.ROOT);

  private RegionMoves() {}

  /**
   * The moves that finished in [from, to), each a drain's if the roll's last region-sending action
   * before it (from {@link LocalRoll#timeline()}) was a {@code Drain}, else a reload's.
   */
  static List<Move> read(Path masterLog, Instant from, Instant to, List<String> timeline)
      throws IOException {
    List<Move> out = new ArrayList<>();
    for (String line : Files.readAllLines(masterLog)) {
      Matcher m = FINISHED.matcher(line);
      if (!m.find()) {
        continue;
      }
      Instant at =
          LocalDateTime.parse(m.group(1), STAMP).atZone(ZoneId.systemDefault()).toInstant();
      if (at.isBefore(from) || !at.isBefore(to)) {
        continue;
      }
      out.add(new Move(at, millis(m.group(2)), lastSendBefore(timeline, at).startsWith("Drain")));
    }
    return out;
  }

  /** Milliseconds of HBase's humanTimeDiff text. */
  static long millis(String humanTimeDiff) {
    double ms = 0;
    Matcher m = PART.matcher(humanTimeDiff);
    while (m.find()) {
      double n = Double.parseDouble(m.group(1));
      ms +=
          switch (m.group(2)) {
            case "hrs" -> n * 3_600_000;
            case "mins" -> n * 60_000;
            case "sec" -> n * 1000;
            default -> n;
          };
    }
    return Math.round(ms);
  }

  /** The action of the timeline's last Drain or Recommission entry before {@code at}, or "". */
  static String lastSendBefore(List<String> timeline, Instant at) {
    String last = "";
    for (String e : timeline) {
      int space = e.indexOf(' ');
      Instant t = Instant.parse(e.substring(0, space));
      String action = e.substring(space + 1);
      if (t.isAfter(at)) {
        break;
      }
      if (action.startsWith("Drain") || action.startsWith("Recommission")) {
        last = action;
      }
    }
    return last;
  }

  static Summary summary(List<Move> moves, boolean drain) {
    long[] ms =
        moves.stream().filter(m -> m.drain() == drain).mapToLong(Move::millis).sorted().toArray();
    return ms.length == 0
        ? new Summary(0, 0, 0)
        : new Summary(ms.length, ms[(ms.length - 1) / 2], ms[ms.length - 1]);
  }
}
