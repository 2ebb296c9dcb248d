package dev.hbase.cache.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The numbers the suite saw: printed as they come and written to e2e/target/e2e-report.md. */
final class Report {
  private final List<String> lines = new ArrayList<>();
  private final Path file;
  private final boolean print;

  Report(Path file) {
    this(file, true);
  }

  /** {@code print}: each line to stdout too (not in a run without a cluster). */
  Report(Path file, boolean print) {
    this.file = file;
    this.print = print;
    lines.add("# e2e report (" + Instant.now() + ")");
    lines.add("");
  }

  synchronized void section(String title) {
    lines.add("");
    lines.add("## " + title);
    lines.add("");
    if (print) {
      System.out.println("\n[e2e] ## " + title);
    }
    flush();
  }

  synchronized void line(String fmt, Object... args) {
    String s = String.format(Locale.ROOT, fmt, args);
    lines.add(s);
    if (print) {
      System.out.println("[e2e] " + s);
    }
    flush();
  }

  synchronized void flush() {
    try {
      Files.createDirectories(file.getParent());
      Files.write(file, lines);
    } catch (IOException e) {
      System.out.println("[e2e] cannot write " + file + ": " + e);
    }
  }

  static String ratio(Double d) {
    return d == null ? "n/a" : String.format(Locale.ROOT, "%.4f", d);
  }
}
