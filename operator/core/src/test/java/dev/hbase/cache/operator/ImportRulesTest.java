package dev.hbase.cache.operator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The operator's floors, from the top: the controller (the reconciler and its steps); beside each
 * other below it metrics/ (hit ratios in the status, the /metrics text) and connection/ (the HBase
 * admin connections); then render/, plan/ and roll/; hbase/ at the ground.
 *
 * <p>plan/ and roll/ are pure decisions: they take values and return values, and the controller
 * does the talking to Kubernetes and HBase. So they must not use the Kubernetes client, JOSDK, the
 * HBase client or the controller. Kubernetes model types (Quantity), the API classes
 * (dev.hbase.cache.api) and the operator's own HBase value types (dev.hbase.cache.operator.hbase)
 * are fine.
 *
 * <p>No import runs back up: nothing below the controller uses it, metrics/ and connection/ do not
 * use each other, no two packages use each other, and in the controller, metrics/ and connection/
 * no class uses a class that (through others) uses it.
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

  static final String CONTROLLER = "dev.hbase.cache.operator.controller..";
  static final String METRICS = "dev.hbase.cache.operator.metrics..";
  static final String CONNECTION = "dev.hbase.cache.operator.connection..";

  static JavaClasses operator() {
    return new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.hbase.cache.operator");
  }

  /** What the compiled classes use, including fully qualified names in the code. */
  @Test
  void planAndRollDependOnNoClientTypes() {
    JavaClasses classes = operator();
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

  /** Below the controller, nothing uses it; metrics/ and connection/ stand beside each other. */
  @Test
  void nothingBelowTheControllerUsesIt() {
    JavaClasses classes = operator();
    noClasses()
        .that()
        .resideInAnyPackage(
            METRICS,
            CONNECTION,
            "dev.hbase.cache.operator.render..",
            "dev.hbase.cache.operator.hbase..",
            PURE[0],
            PURE[1])
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(CONTROLLER)
        .because("the controller calls down into metrics/, connection/ and the values; never back")
        .check(classes);
    noClasses()
        .that()
        .resideInAnyPackage(METRICS)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(CONNECTION, "io.fabric8.kubernetes.client..", "io.javaoperatorsdk..")
        .because("metrics/ reads RegionServers through its CacheProbe and renders statuses")
        .check(classes);
    noClasses()
        .that()
        .resideInAnyPackage(CONNECTION)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(METRICS, "io.fabric8.kubernetes.client..", "io.javaoperatorsdk..")
        .because("connection/ only opens and keeps HBase admin connections")
        .check(classes);
  }

  /** No two packages use each other (dev.hbase.cache.operator.X, each with what is under it). */
  @Test
  void packagesFormNoCircle() {
    slices().matching("dev.hbase.cache.operator.(*)..").should().beFreeOfCycles().check(operator());
  }

  /**
   * In the controller, metrics/ and connection/, no class (with its nested ones) uses a class that
   * through others uses it: a helper two classes share lives below both.
   */
  @Test
  void classesFormNoCircle() {
    slices()
        .assignedFrom(
            new SliceAssignment() {
              @Override
              public SliceIdentifier getIdentifierOf(JavaClass c) {
                String pkg = c.getPackageName();
                if (!pkg.endsWith(".controller")
                    && !pkg.endsWith(".metrics")
                    && !pkg.endsWith(".connection")) {
                  return SliceIdentifier.ignore();
                }
                String name = c.getName();
                int nested = name.indexOf('$');
                return SliceIdentifier.of(nested < 0 ? name : name.substring(0, nested));
              }

              @Override
              public String getDescription() {
                return "the top-level classes of controller/, metrics/ and connection/";
              }
            })
        .should()
        .beFreeOfCycles()
        .check(operator());
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
