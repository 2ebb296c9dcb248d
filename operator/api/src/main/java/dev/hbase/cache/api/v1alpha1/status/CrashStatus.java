package dev.hbase.cache.api.v1alpha1.status;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.List;
import lombok.Data;
import lombok.experimental.Accessors;

/**
 * The last RegionServer whose container the kubelet reported terminated while HBase still counted
 * its instance live, and what the operator did about it.
 */
@Data
@Accessors(chain = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CrashStatus {
  @JsonPropertyDescription("The pod whose RegionServer container terminated.")
  private String pod;

  @JsonPropertyDescription(
      "The RegionServer instance that died, as HBase names it (host,port,startcode): the one the"
          + " operator had HBase expire, never another instance at the same host and port.")
  private String server;

  @JsonPropertyDescription(
      "What the kubelet reported: the container's termination reason (OOMKilled, Error, ...).")
  private String reason;

  @JsonPropertyDescription("The container's exit code, as the kubelet reported it.")
  private Integer exitCode;

  @JsonPropertyDescription("When the container terminated (RFC 3339, the kubelet's finishedAt).")
  private String terminatedAt;

  @JsonPropertyDescription(
      "What the operator told HBase: Expire (a ServerCrashProcedure for exactly that instance,"
          + " Hbck.scheduleServerCrashProcedures), the master reassigning its regions at once"
          + " instead of after its ZooKeeper session timeout.")
  private String toldHBase;

  @JsonPropertyDescription(
      "When the operator last told HBase (RFC 3339): asked again every few seconds while the"
          + " master still lists the instance live (the check before the expiry refused it).")
  private String toldHBaseAt;

  @JsonPropertyDescription("How many regions the instance served when it died.")
  private Integer regions;

  @JsonPropertyDescription(
      "When every one of those regions served again on a live RegionServer (RFC 3339); absent"
          + " while some do not.")
  private String regionsServingAt;

  @JsonPropertyDescription(
      "Seconds from the container's termination until every one of its regions served again,"
          + " as the operator's HBase snapshots saw it (about a second apart meanwhile).")
  private Double regionsUnavailableSeconds;

  @JsonPropertyDescription(
      "The regions (encoded names) that do not serve yet; absent once every one does, or once"
          + " the operator stopped following them (the message says why).")
  private List<String> pendingRegions;

  @JsonPropertyDescription("What happened, in a sentence (the RegionServerCrashed event's text).")
  private String message;
}
