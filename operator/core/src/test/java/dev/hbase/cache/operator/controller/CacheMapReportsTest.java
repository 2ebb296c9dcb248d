package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.status.RegionServerStatus;
import dev.hbase.cache.operator.controller.Observation.CacheMapRemoval;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the operator reads of the cache-map-guard: its init container's termination message and the
 * RegionServer container's previous one (the postStart guard writes there), each with its reason;
 * and the RegionServer rows of the status that say so.
 */
class CacheMapReportsTest {

  static ContainerStatus guard(String message) {
    return new ContainerStatusBuilder()
        .withName("cache-map-guard")
        .withNewState()
        .withNewTerminated()
        .withExitCode(0)
        .withMessage(message)
        .withStartedAt("2026-12-01T10:00:00Z")
        .withFinishedAt("2026-12-01T10:00:01Z")
        .endTerminated()
        .endState()
        .build();
  }

  static ContainerStatus regionServer(String lastMessage) {
    return new ContainerStatusBuilder()
        .withName("regionserver")
        .withRestartCount(1)
        .withNewState()
        .withNewRunning()
        .withStartedAt("2026-12-01T11:00:30Z")
        .endRunning()
        .endState()
        .withNewLastState()
        .withNewTerminated()
        .withExitCode(1)
        .withMessage(lastMessage)
        .withStartedAt("2026-12-01T11:00:00Z")
        .withFinishedAt("2026-12-01T11:00:09Z")
        .endTerminated()
        .endLastState()
        .build();
  }

  static Pod pod(List<ContainerStatus> init, List<ContainerStatus> containers) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("rs-0")
        .endMetadata()
        .withNewStatus()
        .withInitContainerStatuses(init)
        .withContainerStatuses(containers)
        .endStatus()
        .build();
  }

  static final String TRUNCATED =
      "TruncatedCacheMapRemoved: removed the truncated BucketCache persistence map"
          + " /cache/bucketcache.map (322 bytes): it ends after chunk 1 of 3, at byte 322";

  @Test
  void theInitContainersMessageWithItsReason() {
    List<CacheMapRemoval> r =
        CacheMapReports.of(pod(List.of(guard(TRUNCATED)), List.of()), "regionserver");
    assertThat(r).singleElement();
    assertThat(r.get(0).reason()).isEqualTo(Reason.TruncatedCacheMapRemoved);
    assertThat(r.get(0).at()).isEqualTo("2026-12-01T10:00:01Z");
    assertThat(r.get(0).when()).isEqualTo("before its start");
    assertThat(r.get(0).message())
        .startsWith("removed the truncated BucketCache persistence map /cache/bucketcache.map");
  }

  @Test
  void aGuardFromBeforeTheReasonsReportsAnEmptyMap() {
    var r =
        CacheMapReports.of(
            pod(
                List.of(
                    guard(
                        "removed the empty BucketCache persistence map /cache/bucketcache.map (20"
                            + " bytes, 0 cached blocks) that HBase 2.6 cannot read at start")),
                List.of()),
            "regionserver");
    assertThat(r)
        .singleElement()
        .extracting(CacheMapRemoval::reason)
        .isEqualTo(Reason.EmptyCacheMapRemoved);
  }

  @Test
  void thePostStartGuardShowsInTheRegionServersPreviousContainer() {
    var r =
        CacheMapReports.of(
            pod(List.of(guard("")), List.of(regionServer(TRUNCATED))), "regionserver");
    assertThat(r).singleElement();
    assertThat(r.get(0).reason()).isEqualTo(Reason.TruncatedCacheMapRemoved);
    assertThat(r.get(0).at())
        .as("the start of the container it ran in")
        .isEqualTo("2026-12-01T11:00:00Z");
    assertThat(r.get(0).when()).isEqualTo("at the start of its previous container");

    assertThat(
            CacheMapReports.of(
                pod(
                    List.of(),
                    List.of(regionServer("java.lang.OutOfMemoryError: Java heap space"))),
                "regionserver"))
        .as("the RegionServer's own message (a log tail) is no report")
        .isEmpty();
    assertThat(CacheMapReports.of(pod(List.of(), List.of(regionServer(TRUNCATED))), "sidecar"))
        .as("another container's")
        .isEmpty();
  }

  @Test
  void theRowsSayWhatWasRemovedForTheirPodAndNothingOnceItWasKept() {
    var rows =
        List.of(
            new RegionServerStatus().setPod("rs-0"),
            new RegionServerStatus()
                .setPod("rs-1")
                .setCacheMapRemoved(new RegionServerStatus.CacheMapRemoval().setReason("stale")));
    var removals =
        CacheMapReports.of(
            pod(List.of(guard(TRUNCATED)), List.of(regionServer(TRUNCATED.replace("322", "99")))),
            "regionserver");
    CacheMapReports.apply(rows, removals);
    assertThat(rows.get(0).getCacheMapRemoved().getReason()).isEqualTo("TruncatedCacheMapRemoved");
    assertThat(rows.get(0).getCacheMapRemoved().getAt())
        .as("the latest of the two")
        .isEqualTo("2026-12-01T11:00:00Z");
    assertThat(rows.get(0).getCacheMapRemoved().getMessage()).contains("(99 bytes)");
    assertThat(rows.get(1).getCacheMapRemoved()).as("rs-1 reports none now").isNull();
  }
}
