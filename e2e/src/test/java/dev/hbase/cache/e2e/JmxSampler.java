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
    thread =
        new Thread(
            () -> {
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
            },
            "jmx-sampler");
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
   * The last sample of one instance taken at or before {@code end} that has data reads: its
   * counters are cumulative since that instance started. Null if there is none.
   */
  Jmx lastWithReads(String pod, long startTime, Instant end) {
    Jmx best = null;
    for (Jmx j : of(pod)) {
      if (j.startTime() == startTime && !j.at().isAfter(end) && j.dataReads() > 0) {
        best = j;
      }
    }
    return best;
  }

  /**
   * The first sample of one instance taken at or after {@code from} with at least {@code reads}
   * data reads since it started, or null.
   */
  Jmx firstWithReads(String pod, long startTime, Instant from, long reads) {
    for (Jmx j : of(pod)) {
      if (j.startTime() == startTime && !j.at().isBefore(from) && j.dataReads() >= reads) {
        return j;
      }
    }
    return null;
  }

  /** The first sample of one instance with data reads, or null. */
  Jmx firstWithReads(String pod, long startTime) {
    return firstWithReads(pod, startTime, Instant.MIN, 1);
  }

  /**
   * The share of every RegionServer's data reads over [from, to] that their caches served (the
   * e2e's own figure of what a roll cost the cluster): per instance (pod and start time), its
   * counters in its last sample up to {@code to} minus those in its last sample up to {@code from}
   * (zero for an instance started within the window). With an L2 a cold read counts as two misses
   * in HBase 2.6.4, so misses are halved. Null when there was no read.
   */
  Double servedFromCache(Instant from, Instant to) {
    java.util.Map<String, List<Jmx>> byInstance = new java.util.TreeMap<>();
    for (Jmx j : samples) {
      if (!j.at().isAfter(to)) {
        byInstance.computeIfAbsent(j.pod() + "@" + j.startTime(), k -> new ArrayList<>()).add(j);
      }
    }
    double served = 0;
    double reads = 0;
    for (List<Jmx> inst : byInstance.values()) {
      Jmx last = inst.get(inst.size() - 1);
      if (last.at().isBefore(from)) {
        continue;
      }
      Jmx base = null;
      for (Jmx j : inst) {
        if (!j.at().isAfter(from)) {
          base = j;
        }
      }
      if (base == null && last.startTime() < from.toEpochMilli()) {
        base = inst.get(0);
      }
      long hits = last.dataHits() - (base == null ? 0 : base.dataHits());
      long misses = last.dataMisses() - (base == null ? 0 : base.dataMisses());
      served += hits;
      reads += hits + (last.l2Capacity() > 0 ? misses / 2.0 : misses);
    }
    return reads == 0 ? null : served / reads;
  }

  /** Every sample as CSV, for the report's directory. */
  String csv() {
    StringBuilder sb =
        new StringBuilder(
            "at,pod,startTime,dataHits,dataMisses,l2Used,l2Free,l1Used,l1Free,failedInsertions\n");
    for (Jmx j : samples) {
      sb.append(j.at())
          .append(',')
          .append(j.pod())
          .append(',')
          .append(j.startTime())
          .append(',')
          .append(j.dataHits())
          .append(',')
          .append(j.dataMisses())
          .append(',')
          .append(j.l2Used())
          .append(',')
          .append(j.l2Free())
          .append(',')
          .append(j.l1Used())
          .append(',')
          .append(j.l1Free())
          .append(',')
          .append(j.failedInsertions())
          .append('\n');
    }
    return sb.toString();
  }

  @Override
  public void close() {
    stop = true;
    thread.interrupt();
  }
}
