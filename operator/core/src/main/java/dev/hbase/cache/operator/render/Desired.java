package dev.hbase.cache.operator.render;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.Sizes;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Lifecycle;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSecurityContextBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The objects the operator wants to exist, as pure functions of the policy, the plan and what it
 * observed. The reconciler only sends them.
 *
 * <p>The RegionServer patch is one object: its fields (update strategy, revision, grace period, JVM
 * options, cache volume, hooks, pod security) are rendered together so that the field manager owns
 * exactly that set; the hooks and the guard's init container themselves are {@link PodHooks}.
 */
public final class Desired {
  public static final String FIELD_MANAGER = "hbase-cache-operator";
  public static final String HASH_ANNOTATION = "cache.hbase.dev/config-hash";
  public static final String POLICY_LABEL = "cache.hbase.dev/policy";

  /**
   * On a derived hbase-site ConfigMap: the base ConfigMap it was derived from. A policy created
   * after another one was deleted finds the config volume its predecessor repointed by it.
   */
  public static final String BASE_ANNOTATION = "cache.hbase.dev/base-config-map";

  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";
  public static final String CACHE_VOLUME = "bucketcache";
  public static final String SITE_FILE = "hbase-site.xml";

  /** HBase's default RegionServer info port (hbase.regionserver.info.port). */
  public static final int DEFAULT_INFO_PORT = 16030;

  private Desired() {}

  public static String regionServerConfigMapName(BlockCachePolicy policy) {
    return policy.getMetadata().getName() + "-rs-site";
  }

  public static String masterConfigMapName(BlockCachePolicy policy) {
    return policy.getMetadata().getName() + "-master-site";
  }

  /** The container the policy manages: targetRef.container, else the first one. */
  public static Optional<Container> container(PodSpec spec, String name) {
    if (spec == null || spec.getContainers() == null || spec.getContainers().isEmpty()) {
      return Optional.empty();
    }
    if (name == null) {
      return Optional.of(spec.getContainers().get(0));
    }
    return spec.getContainers().stream().filter(c -> name.equals(c.getName())).findFirst();
  }

  /**
   * The pod volume holding hbase-site.xml: the first ConfigMap volume whose ConfigMap {@code
   * isSite} accepts (the base, the policy's own derived one, or one another policy derived from the
   * same base; see {@link #derivedFrom}).
   */
  public static Optional<String> configVolume(PodSpec spec, Predicate<String> isSite) {
    if (spec == null || spec.getVolumes() == null) {
      return Optional.empty();
    }
    return spec.getVolumes().stream()
        .filter(v -> v.getConfigMap() != null && v.getConfigMap().getName() != null)
        .filter(v -> isSite.test(v.getConfigMap().getName()))
        .map(Volume::getName)
        .findFirst();
  }

  /**
   * Whether the operator derived {@code cm} from the base ConfigMap {@code baseName} (for any
   * policy, also one since deleted: its StatefulSet still mounts what it derived).
   */
  public static boolean derivedFrom(ConfigMap cm, String baseName) {
    var m = cm == null ? null : cm.getMetadata();
    return m != null
        && m.getLabels() != null
        && FIELD_MANAGER.equals(m.getLabels().get(MANAGED_BY))
        && m.getAnnotations() != null
        && baseName.equals(m.getAnnotations().get(BASE_ANNOTATION));
  }

  /** Base ConfigMap data with hbase-site.xml overlaid. */
  public static Map<String, String> siteData(
      Map<String, String> baseData,
      Map<String, String> set,
      java.util.Set<String> removed,
      String comment) {
    Map<String, String> data = new TreeMap<>(baseData == null ? Map.of() : baseData);
    Map<String, SiteXml.Property> site =
        SiteXml.overlayProperties(SiteXml.properties(data.get(SITE_FILE)), set, removed);
    data.put(SITE_FILE, SiteXml.renderProperties(site, comment));
    return data;
  }

  public static ConfigMap configMap(
      BlockCachePolicy policy, String name, Map<String, String> data) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(policy.getMetadata().getNamespace())
        .addToLabels(MANAGED_BY, FIELD_MANAGER)
        .addToLabels(POLICY_LABEL, policy.getMetadata().getName())
        .endMetadata()
        .withData(data)
        .build();
  }

  /**
   * A derived hbase-site ConfigMap: {@link #configMap} naming its base in {@link #BASE_ANNOTATION}.
   */
  public static ConfigMap siteConfigMap(
      BlockCachePolicy policy, String name, Map<String, String> data) {
    ConfigMap cm = configMap(policy, name, data);
    cm.getMetadata()
        .setAnnotations(Map.of(BASE_ANNOTATION, policy.getSpec().getHbaseSiteConfigMap()));
    return cm;
  }

  /**
   * The revision pods are compared against: the plan, the derived configuration files and the
   * manual restart token. A pod whose template annotation differs is out of date. {@code
   * derivedData} is the current revision's files alone ({@link #siteData}), never the derived
   * ConfigMap's data with other revisions' keys ({@link RevisionFiles}): keeping or dropping those
   * never changes the revision, and the revision is computed as before those keys existed.
   */
  public static String revision(Plan plan, Map<String, String> derivedData, String restartToken) {
    StringBuilder b = new StringBuilder(plan.configHash()).append('\n');
    new TreeMap<>(derivedData).forEach((k, v) -> b.append(k).append('\0').append(v).append('\0'));
    b.append("restart=").append(Objects.toString(restartToken, ""));
    try {
      byte[] d =
          MessageDigest.getInstance("SHA-256")
              .digest(b.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The fields of the RegionServer StatefulSet the operator owns, for a server-side apply under
   * {@link #FIELD_MANAGER}: OnDelete updates, the revision annotation, grace period, JVM
   * environment, the config volume pointing at the derived ConfigMap (and at the keys of the
   * revision's files, {@link RevisionFiles}) and the cache volume.
   */
  public static StatefulSet regionServerPatch(
      BlockCachePolicy policy,
      Plan plan,
      String revision,
      Container regionServer,
      String configVolume) {
    return regionServerPatch(policy, plan, revision, regionServer, configVolume, null);
  }

  /**
   * The same, for a pod template with this security context: a cache volume on a PVC gets an {@link
   * #cacheVolumeGroup fsGroup} when the template sets none.
   */
  public static StatefulSet regionServerPatch(
      BlockCachePolicy policy,
      Plan plan,
      String revision,
      Container regionServer,
      String configVolume,
      PodSecurityContext podSecurity) {
    return regionServerPatch(
        policy, plan, revision, regionServer, configVolume, podSecurity, DEFAULT_INFO_PORT);
  }

  /** The same, for RegionServers whose info server (/jmx) listens on {@code infoPort}. */
  public static StatefulSet regionServerPatch(
      BlockCachePolicy policy,
      Plan plan,
      String revision,
      Container regionServer,
      String configVolume,
      PodSecurityContext podSecurity,
      int infoPort) {
    return regionServerPatch(
        policy, plan, revision, regionServer, configVolume, podSecurity, infoPort, null);
  }

  /**
   * The same, the config volume mapping the derived ConfigMap's keys of the revision's files to
   * their paths ({@link RevisionFiles#items}; null: the whole ConfigMap, no items).
   */
  public static StatefulSet regionServerPatch(
      BlockCachePolicy policy,
      Plan plan,
      String revision,
      Container regionServer,
      String configVolume,
      PodSecurityContext podSecurity,
      int infoPort,
      List<KeyToPath> configItems) {
    String containerName = regionServer.getName();
    Lifecycle hooks = PodHooks.lifecycle(policy, plan, regionServer, infoPort);
    boolean warmStop = hooks != null && hooks.getPreStop() != null;
    List<EnvVar> env = new ArrayList<>();
    plan.env().forEach((k, v) -> env.add(new EnvVar(k, v, null)));
    List<VolumeMount> mounts = new ArrayList<>();
    List<Volume> volumes = new ArrayList<>();
    volumes.add(
        new VolumeBuilder()
            .withName(configVolume)
            .withNewConfigMap()
            .withName(regionServerConfigMapName(policy))
            .withItems(configItems)
            .endConfigMap()
            .build());
    if (plan.volume() != null) {
      mounts.add(
          new VolumeMount(plan.volume().mountPath(), null, CACHE_VOLUME, null, null, null, null));
      if (plan.volume().memory()) {
        volumes.add(
            new VolumeBuilder()
                .withName(CACHE_VOLUME)
                .withNewEmptyDir()
                .withMedium("Memory")
                .withSizeLimit(new Quantity(Sizes.quantity(plan.volume().size())))
                .endEmptyDir()
                .build());
      }
    }
    Container c =
        new ContainerBuilder()
            .withName(containerName)
            .withEnv(env)
            .withVolumeMounts(mounts)
            .withLifecycle(hooks)
            .build();
    return new StatefulSetBuilder()
        .withNewMetadata()
        .withName(policy.getSpec().getTargetRef().getName())
        .withNamespace(policy.getMetadata().getNamespace())
        .endMetadata()
        .withNewSpec()
        .withNewUpdateStrategy()
        .withType("OnDelete")
        .endUpdateStrategy()
        .withNewTemplate()
        .withNewMetadata()
        .addToAnnotations(HASH_ANNOTATION, revision)
        .endMetadata()
        .withNewSpec()
        .withSecurityContext(
            cacheVolumeGroup(plan, podSecurity, regionServer)
                .map(
                    g ->
                        new PodSecurityContextBuilder()
                            .withFsGroup(g)
                            .withFsGroupChangePolicy("OnRootMismatch")
                            .build())
                .orElse(null))
        .withTerminationGracePeriodSeconds(
            plan.terminationGracePeriodSeconds() + (warmStop ? PodHooks.WARM_STOP_SECONDS : 0))
        .withInitContainers(PodHooks.cacheMapGuard(plan, regionServer).stream().toList())
        .withContainers(c)
        .withVolumes(volumes)
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }

  /**
   * The group the cache volume is given (pod {@code securityContext.fsGroup}), so that a
   * RegionServer running as a non-root user can write its cache file on any storage: a fresh CSI
   * volume is root-owned and not world-writable (kind's local-path directories are, which hides
   * it). The kubelet then makes the volume's root group-owned and group-writable, and adds the
   * group to the container's processes ({@code OnRootMismatch}: only when the root does not show it
   * already, so a large cache is not walked at every start). The group is the container's {@code
   * runAsGroup}, else its user's id; nothing when the template sets another fsGroup (its choice),
   * the cache is tmpfs or absent, or the container runs as root or as the image's unknown user.
   */
  public static Optional<Long> cacheVolumeGroup(
      Plan plan, PodSecurityContext pod, Container regionServer) {
    if (plan.volume() == null || plan.volume().memory()) {
      return Optional.empty();
    }
    var c = regionServer.getSecurityContext();
    Long user = c != null && c.getRunAsUser() != null ? c.getRunAsUser() : null;
    Long group = c != null && c.getRunAsGroup() != null ? c.getRunAsGroup() : null;
    if (pod != null) {
      user = user != null ? user : pod.getRunAsUser();
      group = group != null ? group : pod.getRunAsGroup();
    }
    if (user == null || user == 0) {
      return Optional.empty();
    }
    long g = group != null ? group : user;
    // an fsGroup of another value is the template's own choice; the same value may be the
    // operator's from an earlier apply, which it must keep applying or the apply would drop it
    if (pod != null && pod.getFsGroup() != null && pod.getFsGroup() != g) {
      return Optional.empty();
    }
    return Optional.of(g);
  }

  /** The cache PVC template of the file modes on disk. */
  public static PersistentVolumeClaim claimTemplate(Plan plan) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withName(CACHE_VOLUME)
        .addToLabels(MANAGED_BY, FIELD_MANAGER)
        .endMetadata()
        .withNewSpec()
        .withAccessModes("ReadWriteOnce")
        .withStorageClassName(plan.volume().storageClassName())
        .withNewResources()
        .addToRequests("storage", new Quantity(Sizes.quantity(plan.pvcSize())))
        .endResources()
        .endSpec()
        .build();
  }

  /**
   * The master workload's config volume patch (same idea as the RegionServers, no restart roll).
   */
  public static Volume masterConfigVolume(BlockCachePolicy policy, String volumeName) {
    return new VolumeBuilder()
        .withName(volumeName)
        .withNewConfigMap()
        .withName(masterConfigMapName(policy))
        .endConfigMap()
        .build();
  }
}
