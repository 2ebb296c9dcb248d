package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * A StatefulSet recreate under way: the object the operator will create again, saved before its
 * orphan delete. It lives in the policy's status, where users see it; the status subresource is not
 * the operator's alone (scope=Prerequisites grants it to namespace admins), so the operator creates
 * from it only what its own record of recreates, in its own namespace, vouches for (the SHA-256 of
 * this manifest, this UID, this save time).
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
