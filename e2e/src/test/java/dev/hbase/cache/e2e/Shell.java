package dev.hbase.cache.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs kubectl and the e2e/kind scripts as a user would; bounded, output captured. */
final class Shell {
  record Result(int code, String output) {}

  static Result run(Path dir, long timeoutSeconds, List<String> cmd) {
    return run(dir, timeoutSeconds, Map.of(), cmd);
  }

  /** As {@link #run(Path, long, List)}, with {@code env} added to this process's environment. */
  static Result run(Path dir, long timeoutSeconds, Map<String, String> env, List<String> cmd) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
      pb.environment().putAll(env);
      Process p = pb.start();
      // read in the background so a chatty process cannot block on a full pipe
      var out = new java.io.ByteArrayOutputStream();
      Thread reader =
          new Thread(
              () -> {
                try {
                  p.getInputStream().transferTo(out);
                } catch (IOException ignored) {
                  // process gone
                }
              });
      reader.start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        reader.join(5000);
        return new Result(
            -1,
            "timed out after "
                + timeoutSeconds
                + "s: "
                + String.join(" ", cmd)
                + "\n"
                + out.toString(StandardCharsets.UTF_8));
      }
      reader.join(5000);
      return new Result(p.exitValue(), out.toString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, e.toString());
    }
  }
}
