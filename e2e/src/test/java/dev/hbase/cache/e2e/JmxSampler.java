package dev.hbase.cache.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** Samples every RegionServer's /jmx every few seconds in the background; keeps all samples. */
final class JmxSampler implements AutoCloseable {
  private final KubernetesClient client;
  private final String ns;
  private final List<String> pods;
  private final List<Jmx> samples = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private volatile boolean stop;

  JmxSampler(KubernetesClient client, String ns, List<String> pods, Duration every) {
    this.client = client;
    this.ns = ns;
    this.pods = pods;
    thread = new Thread(() -> {
      while (!stop) {
        for (String p : pods) {
          try {
            samples.add(Jmx.read(client, ns, p));
          } catch (Exception e) {
            // pod down or restarting: no sample
          }
        }
        try {
          Thread.sleep(every.toMillis());
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "jmx-sampler");
    thread.setDaemon(true);
    thread.start();
  }

  List<Jmx> of(String pod) {
    List<Jmx> out = new ArrayList<>();
    for (Jmx j : samples) {
      if (j.pod().equals(pod)) {
        out.add(j);
      }
    }
    return out;
  }

  /** The last sample of the pod taken at or before t. */
  Optional<Jmx> at(String pod, Instant t) {
    Jmx best = null;
    for (Jmx j : of(pod)) {
      if (!j.at().isAfter(t)) {
        best = j;
      }
    }
    return Optional.ofNullable(best);
  }

  /** Hit ratio of one instance over [from, to] (samples of the same start time), or null. */
  Double ratio(String pod, Instant from, Instant to) {
    Jmx a = null;
    Jmx b = null;
    for (Jmx j : of(pod)) {
      if (j.at().isBefore(from)) {
        continue;
      }
      if (j.at().isAfter(to)) {
        break;
      }
      if (a == null) {
        a = j;
      } else if (j.startTime() == a.startTime()) {
        b = j;
      }
    }
    return a == null || b == null ? null : b.ratioSince(a);
  }

  /**
   * The new instance's data-block hit ratio over its first {@code window} of reads: from its
   * first sample with data reads to the first sample {@code window} later (counters start at 0,
   * so this is the cumulative ratio since the restart). Null until such samples exist.
   */
  Jmx[] firstReads(String pod, long startTime, Duration window) {
    Jmx first = null;
    for (Jmx j : of(pod)) {
      if (j.startTime() != startTime) {
        continue;
      }
      if (first == null && j.dataReads() > 0) {
        first = j;
      }
      if (first != null && !j.at().isBefore(first.at().plus(window))) {
        return new Jmx[] {first, j};
      }
    }
    return null;
  }

  @Override
  public void close() {
    stop = true;
    thread.interrupt();
  }
}
