package dev.hbase.cache.operator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Sizes;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every example plans for the demo chart's RegionServers, through the same code as `plan`. */
class ExamplesTest {
  static final Path ROOT = Path.of("../..");

  static long chartRegionServerLimit() throws Exception {
    JsonNode v =
        new ObjectMapper(new YAMLFactory())
            .readTree(ROOT.resolve("charts/hbase/values.yaml").toFile());
    return Sizes.parse(v.at("/regionserver/resources/limits/memory").asText());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"lru.yaml", "offheap.yaml", "file.yaml", "persistent-file.yaml", "meta-only.yaml"})
  void examplePlansForTheDemoChart(String file) throws Exception {
    String yaml = Files.readString(ROOT.resolve("examples").resolve(file));
    PlanResult r = PlanCommand.plan(yaml, chartRegionServerLimit(), chartRegionServerLimit());
    assertThat(r).as("%s at the chart's RegionServer limit: %s", file, r).isInstanceOf(Plan.class);
    // the only advice allowed is the tmpfs notice of the File example
    assertThat(((Plan) r).warnings()).allMatch(w -> w.startsWith("storage.medium Memory"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"4Gi", "16Gi", "64Gi"})
  void commandPrintsPlansAndRefusals(String limit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of(
                "-f",
                ROOT.resolve("examples/persistent-file.yaml").toString(),
                "--memory-limit",
                limit),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).isEqualTo(PlanCommand.OK);
    assertThat(out.toString())
        .contains(
            "heap: ",
            "directMemory: ",
            "pvcSize: 2Gi",
            "configHash: ",
            "env:",
            "HBASE_HEAPSIZE: ",
            "regionServerSite:",
            "hbase.bucketcache.persistent.path: ",
            "masterSite:");
    assertThat(err.toString()).isEmpty();
  }

  /**
   * {@code -f -}: the policy on standard input, as {@code kubectl run -i --image=<the published
   * image> -- plan -f - ...} passes it (no checkout, no file in the image).
   */
  @org.junit.jupiter.api.Test
  void planReadsThePolicyFromStandardInput() throws Exception {
    byte[] policy = Files.readAllBytes(ROOT.resolve("examples/persistent-file.yaml"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of("-f", "-", "--memory-limit", "16Gi"),
            new java.io.ByteArrayInputStream(policy),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).as("stderr: %s", err).isEqualTo(PlanCommand.OK);
    ByteArrayOutputStream fromFile = new ByteArrayOutputStream();
    PlanCommand.run(
        List.of("-f", ROOT.resolve("examples/persistent-file.yaml").toString(), "--memory-limit", "16Gi"),
        new PrintStream(fromFile),
        new PrintStream(new ByteArrayOutputStream()));
    assertThat(out.toString()).contains("heap: ", "pvcSize: 2Gi").isEqualTo(fromFile.toString());
    // a policy the planner refuses, from standard input too
    ByteArrayOutputStream refused = new ByteArrayOutputStream();
    assertThat(
            PlanCommand.run(
                List.of("-f", "-", "--memory-limit", "1Gi"),
                new java.io.ByteArrayInputStream(policy),
                new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(refused)))
        .isEqualTo(PlanCommand.REFUSED);
    assertThat(refused.toString()).startsWith("refused:");
  }

  @org.junit.jupiter.api.Test
  void refusalExitsTwoWithReasonsAndUsageErrorsSixtyFour() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int rc =
        PlanCommand.run(
            List.of(
                "-f",
                ROOT.resolve("examples/persistent-file.yaml").toString(),
                "--memory-limit",
                "1Gi"),
            new PrintStream(out),
            new PrintStream(err));
    assertThat(rc).isEqualTo(PlanCommand.REFUSED);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString()).startsWith("refused:").contains("memory limit 1Gi leaves only");
    assertThat(
            PlanCommand.run(
                List.of("--memory-limit", "1Gi"), new PrintStream(out), new PrintStream(err)))
        .isEqualTo(PlanCommand.USAGE);
    assertThat(
            PlanCommand.run(
                List.of("-f", "x.yaml", "--memory-limit", "lots"),
                new PrintStream(out),
                new PrintStream(err)))
        .isEqualTo(PlanCommand.USAGE);
  }
}
