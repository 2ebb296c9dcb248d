package dev.hbase.cache.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Watches the RegionServer pods and keeps, since the last {@link #reset}: the UIDs seen per
 * ordinal, the most ordinals down at once (no pod, a pod being deleted, or a pod not Ready), and a
 * timeline of the changes.
 */
final class PodWatch implements AutoCloseable {
  private final String prefix;
  private final int replicas;
  private final SharedIndexInformer<Pod> informer;
  private final Map<Integer, Pod> current = new HashMap<>();
  private Map<Integer, Set<String>> uids = new LinkedHashMap<>();
  private int maxDown;
  private String maxDownAt = "";
  private final List<String> timeline = new ArrayList<>();
  private Map<Integer, Instant> downSince = new HashMap<>();
  private final Map<Integer, List<long[]>> downtimes = new HashMap<>();

  /**
   * When each pod UID was first seen being deleted (its deletionTimestamp set): epoch ms by
   * "ordinal/uid".
   */
  private final Map<String, Long> deletionsSeen = new LinkedHashMap<>();

  PodWatch(KubernetesClient client, String ns, String statefulSet, int replicas) {
    this.prefix = statefulSet + "-";
    this.replicas = replicas;
    informer =
        client
            .pods()
            .inNamespace(ns)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod p) {
                    update(p, false);
                  }

                  @Override
                  public void onUpdate(Pod o, Pod p) {
                    update(p, false);
                  }

                  @Override
                  public void onDelete(Pod p, boolean unknown) {
                    update(p, true);
                  }
                },
                0);
  }

  static boolean ready(Pod p) {
    return p.getMetadata().getDeletionTimestamp() == null
        && p.getStatus() != null
        && p.getStatus().getConditions() != null
        && p.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private int ordinal(Pod p) {
    String n = p.getMetadata().getName();
    if (!n.startsWith(prefix)) {
      return -1;
    }
    try {
      return Integer.parseInt(n.substring(prefix.length()));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private synchronized void update(Pod p, boolean deleted) {
    int o = ordinal(p);
    if (o < 0 || o >= replicas) {
      return;
    }
    Pod before = current.get(o);
    if (deleted || p.getMetadata().getDeletionTimestamp() != null) {
      deletionsSeen.putIfAbsent(o + "/" + p.getMetadata().getUid(), System.currentTimeMillis());
    }
    if (deleted) {
      if (before != null && before.getMetadata().getUid().equals(p.getMetadata().getUid())) {
        current.remove(o);
      }
    } else {
      current.put(o, p);
      uids.computeIfAbsent(o, k -> new LinkedHashSet<>()).add(p.getMetadata().getUid());
    }
    boolean wasUp = before != null && ready(before);
    boolean isUp = current.get(o) != null && ready(current.get(o));
    Instant now = Instant.now();
    if (wasUp != isUp || before == null || deleted) {
      timeline.add(
          now
              + " "
              + p.getMetadata().getName()
              + " uid="
              + p.getMetadata().getUid().substring(0, 8)
              + (deleted ? " deleted" : isUp ? " up" : " down"));
    }
    if (!isUp && !downSince.containsKey(o)) {
      downSince.put(o, now);
    } else if (isUp && downSince.containsKey(o)) {
      downtimes
          .computeIfAbsent(o, k -> new ArrayList<>())
          .add(new long[] {downSince.remove(o).toEpochMilli(), now.toEpochMilli()});
    }
    int down = 0;
    for (int i = 0; i < replicas; i++) {
      if (current.get(i) == null || !ready(current.get(i))) {
        down++;
      }
    }
    if (down > maxDown) {
      maxDown = down;
      maxDownAt = now + " (" + p.getMetadata().getName() + ")";
    }
  }

  synchronized void reset() {
    uids = new LinkedHashMap<>();
    current.forEach(
        (o, p) ->
            uids.computeIfAbsent(o, k -> new LinkedHashSet<>()).add(p.getMetadata().getUid()));
    int down = 0;
    for (int i = 0; i < replicas; i++) {
      if (current.get(i) == null || !ready(current.get(i))) {
        down++;
      }
    }
    maxDown = down;
    maxDownAt = "at reset";
    timeline.clear();
    downtimes.clear();
  }

  synchronized Map<Integer, Set<String>> uids() {
    Map<Integer, Set<String>> copy = new LinkedHashMap<>();
    uids.forEach((k, v) -> copy.put(k, new LinkedHashSet<>(v)));
    return copy;
  }

  synchronized int maxDown() {
    return maxDown;
  }

  synchronized String maxDownAt() {
    return maxDownAt;
  }

  synchronized List<String> timeline() {
    return new ArrayList<>(timeline);
  }

  /** Per ordinal: [down from, up again] epoch ms of each completed outage since the reset. */
  synchronized Map<Integer, List<long[]>> downtimes() {
    Map<Integer, List<long[]>> copy = new HashMap<>();
    downtimes.forEach((k, v) -> copy.put(k, new ArrayList<>(v)));
    return copy;
  }

  /** Ordinals whose pod was first seen being deleted within [from, to] (epoch ms). */
  synchronized List<Integer> deletionsBetween(long from, long to) {
    List<Integer> out = new ArrayList<>();
    deletionsSeen.forEach(
        (k, at) -> {
          if (at >= from && at <= to) {
            out.add(Integer.parseInt(k.substring(0, k.indexOf('/'))));
          }
        });
    return out;
  }

  synchronized String uid(int ordinal) {
    Pod p = current.get(ordinal);
    return p == null ? null : p.getMetadata().getUid();
  }

  @Override
  public void close() {
    informer.close();
  }
}
