package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Quantity;
import lombok.Data;
import lombok.experimental.Accessors;

/** The cache volume of the file modes. */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class StorageSpec {
  public static final String DEFAULT_MOUNT_PATH = "/var/lib/hbase/bucketcache";
  public static final String MEDIUM_MEMORY = "Memory";

  @ValidationRule(
      value = "isQuantity(string(self)) && quantity(string(self)).compareTo(quantity('64Mi')) >= 0",
      message = "storage.size must be a quantity of at least 64Mi, e.g. 20Gi")
  @JsonPropertyDescription(
      "Size of each RegionServer's cache PVC. Default: the L2 size plus a buffer for the"
          + " persistence map and the filesystem.")
  private Quantity size;

  @JsonPropertyDescription("StorageClass of the cache PVCs. Default: the cluster default.")
  private String storageClassName;

  @ValidationRule(
      value = "self == '' || self == 'Memory'",
      message = "storage.medium must be \"\" (a PVC) or \"Memory\" (tmpfs, File mode only)")
  @JsonPropertyDescription("\"\" (default): a PVC per pod. \"Memory\": tmpfs, File mode only.")
  private String medium;

  @Default(DEFAULT_MOUNT_PATH)
  @Pattern("^/.*")
  @Size(max = 256)
  @ValidationRule(
      value =
          "self.startsWith('/') && !self.contains('/../') && !self.endsWith('/..') && self != '/'"
              + " && !self.contains('//') && !self.contains('/./') && !self.endsWith('/.')",
      message =
          "storage.mountPath must be an absolute path other than / without '..', '.' or '//', e.g. "
              + DEFAULT_MOUNT_PATH)
  @ValidationRule(
      value = "self.matches('^[A-Za-z0-9_./-]+$')",
      message =
          "storage.mountPath may hold letters, digits and _ . / - only (HBase splits its"
              + " persistence path list on commas)")
  @ValidationRule(
      value =
          "!self.matches('^/(bin|boot|dev|etc|lib|lib64|proc|run|sbin|sys|usr|var/run)(/.*)?$')",
      message =
          "storage.mountPath must not be or lie under a system directory (/bin, /boot, /dev, /etc,"
              + " /lib, /lib64, /proc, /run, /sbin, /sys, /usr, /var/run: the service account"
              + " token and the container's own files live there)")
  @JsonPropertyDescription(
      "Where the cache volume is mounted. Default /var/lib/hbase/bucketcache. Keep it stable: the"
          + " persistent cache's checksum covers the file path. Letters, digits and _ . / - only;"
          + " not a system directory; the operator refuses a path that is, contains or lies under"
          + " another mount of the container (the hbase-site config volume included).")
  private String mountPath;
}
