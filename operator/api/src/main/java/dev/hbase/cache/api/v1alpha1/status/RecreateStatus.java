package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * A StatefulSet recreate under way: the object the operator will create again, saved before its
 * orphan delete. It lives in the policy's status (written only through the status subresource,
 * which policy authors are not granted), never in an object a policy author could write: what the
 * operator creates from it is its own.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RecreateStatus {
  @JsonPropertyDescription("The StatefulSet being recreated (the policy's targetRef.name then).")
  private String statefulSet;

  @JsonPropertyDescription("The UID of the StatefulSet deleted (orphan) for the recreate.")
  private String uid;

  @JsonPropertyDescription(
      "The StatefulSet as it will be created again (JSON): the old spec with the cache volume"
          + " template.")
  private String manifest;

  @JsonPropertyDescription("When the operator saved it (RFC 3339).")
  private String savedAt;
}
