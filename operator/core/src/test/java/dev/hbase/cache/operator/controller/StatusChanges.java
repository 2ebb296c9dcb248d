package dev.hbase.cache.operator.controller;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * What each status write changed, as the API server's watch shows it: consecutive statuses of a
 * policy compared field by field (array positions as {@code []}). Counts the writes, each field's
 * changes and each set of fields that changed together, so a benchmark can say which parts of the
 * status cost how many writes. A watch event whose status did not change (a spec edit, a finalizer)
 * is not a status write.
 */
final class StatusChanges implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Watch watch;
  private final Map<String, JsonNode> last = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> byField = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> together = new ConcurrentHashMap<>();
  private final AtomicLong writes = new AtomicLong();
  private volatile String closedEarly;

  StatusChanges(KubernetesClient client) {
    watch =
        client
            .resources(BlockCachePolicy.class)
            .inAnyNamespace()
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, BlockCachePolicy p) {
                    if (action == Action.DELETED) {
                      return;
                    }
                    JsonNode now = JSON.valueToTree(p.getStatus());
                    JsonNode before =
                        last.put(
                            p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(), now);
                    if (before == null) {
                      return; // the first seen: what the later writes are compared with
                    }
                    Set<String> fields = new TreeSet<>();
                    diff("status", before, now, fields);
                    if (!fields.isEmpty()) {
                      record(fields);
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {
                    closedEarly = String.valueOf(cause); // the counts stop here: said in the report
                  }
                });
  }

  void record(Set<String> fields) {
    writes.incrementAndGet();
    fields.forEach(f -> byField.computeIfAbsent(f, k -> new AtomicLong()).incrementAndGet());
    together.computeIfAbsent(String.join(" ", fields), k -> new AtomicLong()).incrementAndGet();
  }

  /**
   * The fields (leaf paths) that differ between two JSON trees; arrays of another size count as the
   * array.
   */
  static void diff(String path, JsonNode a, JsonNode b, Set<String> out) {
    if (a == null || b == null || a.isNull() || b.isNull()) {
      if (!(a == null || a.isNull()) || !(b == null || b.isNull())) {
        out.add(path);
      }
      return;
    }
    if (a.isObject() && b.isObject()) {
      Set<String> names = new TreeSet<>();
      a.fieldNames().forEachRemaining(names::add);
      b.fieldNames().forEachRemaining(names::add);
      for (String n : names) {
        diff(path + "." + n, a.get(n), b.get(n), out);
      }
    } else if (a.isArray() && b.isArray() && a.size() == b.size()) {
      for (int i = 0; i < a.size(); i++) {
        diff(path + "[]", a.get(i), b.get(i), out);
      }
    } else if (!a.equals(b)) {
      out.add(a.isArray() || b.isArray() ? path + "[] (entries)" : path);
    }
  }

  /**
   * Writes, per restart when given; the fields by how many writes changed them; the most frequent
   * sets.
   */
  Map<String, Object> report(int restarts, int top) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("statusWrites", writes.get());
    if (restarts > 0) {
      r.put("statusWritesPerRestart", Math.round(writes.get() * 10.0 / restarts) / 10.0);
    }
    r.put("writesChangingField", sorted(byField, top * 2));
    r.put("fieldsChangedTogether", sorted(together, top));
    if (closedEarly != null) {
      r.put("watchClosedEarly", closedEarly); // an undercount
    }
    return r;
  }

  private static Map<String, Long> sorted(Map<String, AtomicLong> m, int limit) {
    return m.entrySet().stream()
        .sorted(Comparator.comparingLong((Map.Entry<String, AtomicLong> e) -> -e.getValue().get()))
        .limit(limit)
        .collect(
            Collectors.toMap(
                Map.Entry::getKey, e -> e.getValue().get(), (x, y) -> x, LinkedHashMap::new));
  }

  @Override
  public void close() {
    watch.close();
  }
}
