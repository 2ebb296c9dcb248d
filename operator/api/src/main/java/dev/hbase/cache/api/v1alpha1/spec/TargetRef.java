package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class TargetRef {
  public static final String DNS1123_SUBDOMAIN =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
  public static final String DNS1123_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";

  @Required
  @Pattern(DNS1123_SUBDOMAIN)
  @JsonPropertyDescription("Name of the RegionServer StatefulSet (same namespace).")
  private String name;

  @Pattern(DNS1123_LABEL)
  @JsonPropertyDescription("The HBase container; default: the first container of the pod template.")
  private String container;
}
