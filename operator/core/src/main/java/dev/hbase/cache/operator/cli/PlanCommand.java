package dev.hbase.cache.operator.cli;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Plan;
import dev.hbase.cache.operator.plan.PlanResult;
import dev.hbase.cache.operator.plan.Planner;
import dev.hbase.cache.operator.plan.Refusal;
import dev.hbase.cache.operator.plan.Sizes;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code plan -f policy.yaml --memory-limit 16Gi [--memory-request Q] [--master-version V]}: the
 * planner without a cluster. Prints the plan as YAML (exit 0) or the reasons it is refused (exit
 * 2). Usage errors exit 64. {@code -f -} reads the policy from standard input, so the published
 * image plans without a checkout: {@code kubectl run --rm -i --image=... -- plan -f -
 * --memory-limit 16Gi < p.yaml}. {@code --master-version} plans as the operator does once the
 * policy's HMaster has reported that version: without it, a policy that leaves spec.hbase.version
 * unset gets no master key only 2.6 has, as the operator writes none before it has seen the master
 * run 2.6.
 */
public final class PlanCommand {
  public static final int OK = 0;
  public static final int REFUSED = 2;
  public static final int USAGE = 64;

  static final String KIND = "BlockCachePolicy";

  /** {@code -f -}: the policy from standard input. */
  static final String STDIN = "-";

  static final String USAGE_TEXT =
      "usage: hbase-cache-operator plan -f POLICY.yaml --memory-limit QUANTITY [--memory-request QUANTITY]\n"
          + "         [--master-version VERSION]\n"
          + "  Prints the plan for a BlockCachePolicy and a RegionServer container memory limit\n"
          + "  (e.g. 16Gi), or the reasons it is refused (exit code 2). -f - reads the policy from\n"
          + "  standard input. --master-version (e.g. 2.6.4): plan as the operator does once the\n"
          + "  HMaster has reported that version (the master keys only 2.6 has wait for it when\n"
          + "  spec.hbase.version is unset).";

  private static final ObjectMapper YAML =
      new ObjectMapper(
              new YAMLFactory()
                  .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                  .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES))
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  private PlanCommand() {}

  public static int run(List<String> args, PrintStream out, PrintStream err) {
    return run(args, System.in, out, err);
  }

  /** As {@link #run(List, PrintStream, PrintStream)}, {@code -f -} reading {@code in}. */
  public static int run(List<String> args, InputStream in, PrintStream out, PrintStream err) {
    String file = null;
    String limit = null;
    String request = null;
    String masterVersion = null;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      String v = i + 1 < args.size() ? args.get(i + 1) : null;
      switch (a) {
        case "-f", "--file" -> file = v;
        case "--memory-limit" -> limit = v;
        case "--memory-request" -> request = v;
        case "--master-version" -> masterVersion = v;
        case "-h", "--help" -> {
          out.println(USAGE_TEXT);
          return OK;
        }
        default -> {
          err.println("unknown argument: " + a + "\n" + USAGE_TEXT);
          return USAGE;
        }
      }
      i++;
    }
    if (file == null || limit == null) {
      err.println(USAGE_TEXT);
      return USAGE;
    }
    Long limitBytes;
    Long requestBytes;
    try {
      limitBytes = Sizes.parse(limit);
      requestBytes = request == null ? null : Sizes.parse(request);
    } catch (RuntimeException e) {
      err.println(
          "not a memory quantity (like 16Gi or 4096Mi): "
              + (request != null && limit != null ? limit + " / " + request : limit));
      return USAGE;
    }
    String yaml;
    try {
      yaml =
          STDIN.equals(file)
              ? new String(in.readAllBytes(), StandardCharsets.UTF_8)
              : Files.readString(Path.of(file));
    } catch (IOException e) {
      err.println(
          "cannot read " + (STDIN.equals(file) ? "standard input" : file) + ": " + e.getMessage());
      return USAGE;
    }
    PlanResult result = plan(yaml, limitBytes, requestBytes, masterVersion);
    try {
      if (result instanceof Plan plan) {
        out.print(YAML.writeValueAsString(plan.toDocument()));
        return OK;
      }
      Refusal refusal = (Refusal) result;
      err.println("refused:");
      refusal.reasons().forEach(r -> err.println("- " + r));
      return REFUSED;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Plans a BlockCachePolicy document. A document that does not parse (unknown field, mode Heap,
   * wrong type) is refused with the reason, like any other bad input. A file of several documents
   * (an example with its Secret, Role and StatefulSet) is planned by its one BlockCachePolicy.
   */
  public static PlanResult plan(String yaml, Long memoryLimit, Long memoryRequest) {
    return plan(yaml, memoryLimit, memoryRequest, null);
  }

  /** Same, as the operator plans once the HMaster has reported {@code masterVersion} (or null). */
  public static PlanResult plan(
      String yaml, Long memoryLimit, Long memoryRequest, String masterVersion) {
    BlockCachePolicy policy;
    try {
      List<JsonNode> docs =
          YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml).readAll().stream()
              .filter(d -> d != null && !d.isNull() && !d.isMissingNode())
              .toList();
      List<JsonNode> policies =
          docs.size() <= 1
              ? docs
              : docs.stream().filter(d -> KIND.equals(d.path("kind").asText())).toList();
      if (policies.size() > 1 || (docs.size() > 1 && policies.isEmpty())) {
        return new Refusal(
            List.of(
                docs.size()
                    + " YAML documents, "
                    + policies.size()
                    + " of kind "
                    + KIND
                    + ": expected one policy"));
      }
      policy =
          policies.isEmpty() ? null : YAML.treeToValue(policies.get(0), BlockCachePolicy.class);
    } catch (JsonMappingException e) {
      return new Refusal(List.of(describe(e)));
    } catch (IOException e) {
      return new Refusal(List.of("not a YAML document: " + e.getMessage()));
    }
    if (policy == null || policy.getSpec() == null) {
      return new Refusal(List.of("no spec: expected a BlockCachePolicy"));
    }
    return Planner.plan(
        policy.getSpec(),
        memoryLimit,
        memoryRequest,
        dev.hbase.cache.operator.plan.JvmOptions.Trust.ALLOW_LIST,
        java.util.Map.of(),
        masterVersion);
  }

  /** "spec.mode: mode Heap is not supported: ..." rather than a Jackson stack of words. */
  static String describe(JsonMappingException e) {
    String path =
        e.getPath().stream()
            .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
            .collect(Collectors.joining("."))
            .replace(".[", "[");
    Throwable cause = e;
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    String msg =
        e instanceof com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException u
            ? "unknown field \"" + u.getPropertyName() + "\""
            : cause != e ? cause.getMessage() : e.getOriginalMessage();
    return (path.isEmpty() ? "" : path + ": ") + msg;
  }
}
