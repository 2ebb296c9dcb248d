package dev.hbase.cache.api.v1alpha1.spec;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import lombok.Data;
import lombok.experimental.Accessors;

@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class MasterRef {
  public enum Kind {
    StatefulSet,
    Deployment
  }

  @Required
  @Pattern(TargetRef.DNS1123_SUBDOMAIN)
  @JsonPropertyDescription("Name of the HMaster workload (same namespace).")
  private String name;

  @Default("StatefulSet")
  @JsonPropertyDescription("StatefulSet (default) or Deployment.")
  private Kind kind;

  @Pattern(TargetRef.DNS1123_LABEL)
  @JsonPropertyDescription("The HMaster container; default: the first container.")
  private String container;
}
