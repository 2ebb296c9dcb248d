package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.operator.roll.RollModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every reason the operator sends is an enum constant, and docs/reference/reasons.md has a row for
 * each: users' alerts match on these names, so a new one is documented and a renamed one is seen.
 */
class ReasonsReferenceTest {
  static final Path DOC =
      Path.of(System.getProperty("basedir", "."), "..", "..", "docs", "reference", "reasons.md");

  static final Pattern ROW = Pattern.compile("^\\| `([A-Za-z]+)` \\|", Pattern.MULTILINE);

  static Set<String> names(Class<? extends Enum<?>> e) {
    return Arrays.stream(e.getEnumConstants()).map(Enum::name).collect(Collectors.toSet());
  }

  @Test
  void everyReasonHasARowAndEveryRowIsAReason() throws IOException {
    String doc = Files.readString(DOC);
    Set<String> rows = ROW.matcher(doc).results().map(m -> m.group(1)).collect(Collectors.toSet());
    List<Class<? extends Enum<?>>> enums =
        List.of(
            Reason.class,
            RollModel.EventReason.class,
            RollModel.Reason.class,
            Observation.Why.class);
    Set<String> all = enums.stream().flatMap(e -> names(e).stream()).collect(Collectors.toSet());
    for (Class<? extends Enum<?>> e : enums) {
      assertThat(rows).as("rows of %s in %s", e.getName(), DOC).containsAll(names(e));
    }
    assertThat(Stream.concat(rows.stream(), Stream.empty()).filter(r -> !all.contains(r)).toList())
        .as("rows in %s that name no reason", DOC)
        .isEmpty();
  }
}
