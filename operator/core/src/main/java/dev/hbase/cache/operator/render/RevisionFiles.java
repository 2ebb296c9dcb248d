package dev.hbase.cache.operator.render;

import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The derived RegionServer ConfigMap as files per revision, so that each pod runs the files of the
 * revision it was created for (issue 50, point 6). The kubelet updates a mounted ConfigMap key in
 * running pods; a pod's JVM sizes stay those of its creation. So each file of a revision is kept
 * under a key of its own content, {@code <file>.<digest>}, which never changes, and the pod
 * template's config volume maps those keys to the file names ({@code items}): a pod keeps the items
 * of the template it was created from, and a container restarted in it before the roll reaches it
 * starts on its own plan. The plain {@code <file>} keys stay too, holding the current revision:
 * pods created before items (they mount the whole ConfigMap) and anything else that reads {@code
 * hbase-site.xml} from it.
 *
 * <p>A key of a revision goes once no pod of the StatefulSet and not its template names it; never
 * while the StatefulSet controller has not seen the current template (it may be creating a pod from
 * an older one). Pure: inputs in, objects out; the revision pods are compared against is {@link
 * Desired#revision}, of the current files alone, so keeping or dropping other revisions' keys never
 * starts a roll.
 */
public final class RevisionFiles {
  /**
   * The most the derived ConfigMap may hold, keys and values in UTF-8 bytes: the API server takes
   * at most 1 MiB of values, and etcd 1.5 MiB per object with its metadata (managedFields names
   * every key). Above it the operator writes nothing and says so.
   */
  public static final long MAX_BYTES = 900L * 1024;

  /** Hex digits of a file's digest in its key. */
  static final int DIGEST_HEX = 16;

  /** A ConfigMap key's longest (a DNS subdomain's). */
  private static final int KEY_MAX = 253;

  private static final Pattern REVISION_KEY = Pattern.compile(".+\\.[0-9a-f]{16}");

  private RevisionFiles() {}

  /**
   * The key of one file's content, {@code <file>.<digest>}: the first 16 hex digits of the SHA-256
   * of the name and the content (a ConfigMap key is {@code [-._a-zA-Z0-9]+}, as the file names
   * already are; a name too long for the suffix is cut, the digest still tells it). The suffix, not
   * a prefix: a pod that mounts the whole ConfigMap sees {@code hbase-site.xml.0a1b...}, which no
   * {@code *.xml} or {@code *.sh} in its configuration directory picks up.
   */
  public static String key(String file, String content) {
    String name =
        file.length() > KEY_MAX - DIGEST_HEX - 1
            ? file.substring(0, KEY_MAX - DIGEST_HEX - 1)
            : file;
    return name + "." + digest(file + '\0' + content);
  }

  /** Whether {@code key} has the shape of {@link #key}. */
  public static boolean isRevisionKey(String key) {
    return key != null && REVISION_KEY.matcher(key).matches();
  }

  /**
   * The ConfigMap's data and its size.
   *
   * @param missing keys a pod or the template names that neither the current files nor {@code
   *     existing} hold: they cannot be written again (their content is not known here)
   * @param bytes keys and values in UTF-8 bytes
   */
  public record Layout(Map<String, String> data, Set<String> missing, long bytes) {
    public boolean fits() {
      return bytes <= MAX_BYTES;
    }
  }

  /**
   * The derived ConfigMap's data: the current files under their names and under their keys, and
   * every other revision's key that is in use, copied from the ConfigMap as it is.
   *
   * @param files the current revision's files (the base ConfigMap's, hbase-site.xml overlaid)
   * @param existing the derived ConfigMap's data as it is (null: none yet)
   * @param inUse the keys the template's and the pods' config volumes name ({@link #keysInUse});
   *     null: not known for sure, every key of a revision {@code existing} holds is kept
   */
  public static Layout layout(
      Map<String, String> files, Map<String, String> existing, Set<String> inUse) {
    Map<String, String> have = existing == null ? Map.of() : existing;
    Map<String, String> data = new TreeMap<>(files);
    files.forEach((f, content) -> data.put(key(f, content), content));
    Set<String> keep = new TreeSet<>();
    if (inUse == null) {
      have.keySet().stream().filter(RevisionFiles::isRevisionKey).forEach(keep::add);
    } else {
      inUse.stream().filter(RevisionFiles::isRevisionKey).forEach(keep::add);
    }
    Set<String> missing = new TreeSet<>();
    for (String k : keep) {
      if (data.containsKey(k)) {
        continue;
      }
      String content = have.get(k);
      if (content == null) {
        missing.add(k);
      } else {
        data.put(k, content);
      }
    }
    return new Layout(data, missing, size(data));
  }

  /** Keys and values in UTF-8 bytes. */
  public static long size(Map<String, String> data) {
    long n = 0;
    for (var e : data.entrySet()) {
      n += e.getKey().getBytes(StandardCharsets.UTF_8).length;
      n += e.getValue() == null ? 0 : e.getValue().getBytes(StandardCharsets.UTF_8).length;
    }
    return n;
  }

  /**
   * The keys of ConfigMap {@code name} that the StatefulSet's template and its pods name in their
   * volumes' items (ConfigMap volumes and projected ones); null while the StatefulSet controller
   * has not seen the latest template ({@code status.observedGeneration} below {@code generation}):
   * it may be creating a pod from an older one this moment, so nothing may go yet.
   */
  public static Set<String> keysInUse(StatefulSet sts, List<Pod> pods, String name) {
    var st = sts.getStatus();
    Long generation = sts.getMetadata().getGeneration();
    if (st != null
        && st.getObservedGeneration() != null
        && generation != null
        && st.getObservedGeneration() < generation) {
      return null;
    }
    List<PodSpec> specs = new ArrayList<>();
    specs.add(sts.getSpec().getTemplate().getSpec());
    pods.forEach(p -> specs.add(p.getSpec()));
    return keysNamed(specs, name);
  }

  /** The keys of ConfigMap {@code name} that these pod specs' volumes name in their items. */
  static Set<String> keysNamed(Collection<PodSpec> specs, String name) {
    Set<String> out = new TreeSet<>();
    for (PodSpec s : specs) {
      if (s == null || s.getVolumes() == null) {
        continue;
      }
      for (Volume v : s.getVolumes()) {
        var cm = v.getConfigMap();
        if (cm != null && name.equals(cm.getName()) && cm.getItems() != null) {
          cm.getItems().forEach(i -> out.add(i.getKey()));
        }
        if (v.getProjected() != null && v.getProjected().getSources() != null) {
          for (var src : v.getProjected().getSources()) {
            var p = src.getConfigMap();
            if (p != null && name.equals(p.getName()) && p.getItems() != null) {
              p.getItems().forEach(i -> out.add(i.getKey()));
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * The config volume's items for the current revision's files: each file's key at the path the
   * template's items gave that file (yours, or the operator's from before), else at its own name (a
   * file whose name another item already maps is left out). Null, no items, while the template
   * mounts the whole ConfigMap for the revision it already runs: a template from an operator before
   * items, which adding them would change and so roll every pod; they come with the next revision's
   * roll, which changes the template anyway.
   *
   * @param volume the template's config volume as observed (null: none)
   * @param templateRevision the template's revision annotation (null: none)
   * @param revision the current revision
   */
  public static List<KeyToPath> items(
      Map<String, String> files, Volume volume, String templateRevision, String revision) {
    List<KeyToPath> had =
        volume == null || volume.getConfigMap() == null || volume.getConfigMap().getItems() == null
            ? List.of()
            : volume.getConfigMap().getItems();
    boolean ours = had.stream().anyMatch(i -> isRevisionKey(i.getKey()));
    if (!ours && revision.equals(templateRevision)) {
      return null;
    }
    Map<String, List<KeyToPath>> byFile = new HashMap<>();
    Set<String> pathsTaken = new HashSet<>();
    for (KeyToPath i : had) {
      String k = i.getKey();
      String file = isRevisionKey(k) ? k.substring(0, k.length() - DIGEST_HEX - 1) : k;
      if (files.containsKey(file) && i.getPath() != null) {
        byFile.computeIfAbsent(file, f -> new ArrayList<>()).add(i);
        pathsTaken.add(i.getPath());
      }
    }
    List<KeyToPath> out = new ArrayList<>();
    new TreeMap<>(files)
        .forEach(
            (file, content) -> {
              String key = key(file, content);
              List<KeyToPath> given = byFile.get(file);
              if (given != null) {
                given.forEach(i -> out.add(new KeyToPath(key, i.getMode(), i.getPath())));
              } else if (!pathsTaken.contains(file)) {
                out.add(new KeyToPath(key, null, file));
              }
            });
    return out;
  }

  private static String digest(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, DIGEST_HEX / 2);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
