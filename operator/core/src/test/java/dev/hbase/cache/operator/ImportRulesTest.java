package dev.hbase.cache.operator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * plan/ and roll/ are pure decisions: they take values and return values, and the controller does
 * the talking to Kubernetes and HBase. So they must not use the Kubernetes client, JOSDK, the HBase
 * client or the controller. Kubernetes model types (Quantity), the API classes
 * (dev.hbase.cache.api) and the operator's own HBase value types (dev.hbase.cache.operator.hbase)
 * are fine.
 */
class ImportRulesTest {

  static final String[] PURE = {
    "dev.hbase.cache.operator.plan..", "dev.hbase.cache.operator.roll.."
  };

  static final String[] FORBIDDEN = {
    "io.fabric8.kubernetes.client",
    "io.javaoperatorsdk",
    "org.apache.hadoop", // incl. HBase client
    "dev.hbase.cache.operator.controller",
  };

  /** What the compiled classes use, including fully qualified names in the code. */
  @Test
  void planAndRollDependOnNoClientTypes() {
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.hbase.cache.operator");
    assertThat(classes.stream().filter(c -> c.getPackageName().endsWith(".plan"))).isNotEmpty();
    assertThat(classes.stream().filter(c -> c.getPackageName().endsWith(".roll"))).isNotEmpty();

    noClasses()
        .that()
        .resideInAnyPackage(PURE)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(Stream.of(FORBIDDEN).map(p -> p + "..").toArray(String[]::new))
        .because("plan/ and roll/ decide on values; the controller talks to Kubernetes and HBase")
        .check(classes);
  }

  /**
   * The import lines, which also catch what the compiler inlines (constants such as HConstants).
   */
  @Test
  void planAndRollSourcesImportNoClientTypes() throws IOException {
    List<String> violations = new ArrayList<>();
    for (String pkg : PURE) {
      Path dir = Path.of("src/main/java", pkg.replace("..", "").replace('.', '/'));
      assertThat(dir).isDirectory();
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
          List<String> lines = Files.readAllLines(file);
          for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (!line.startsWith("import ")) {
              continue;
            }
            String name = line.replaceFirst("^import\\s+(static\\s+)?", "");
            for (String forbidden : FORBIDDEN) {
              if (name.startsWith(forbidden + ".")) {
                violations.add(file + ":" + (i + 1) + ": " + line);
              }
            }
          }
        }
      }
    }
    assertThat(violations).as("imports of client types in plan/ and roll/").isEmpty();
  }
}
