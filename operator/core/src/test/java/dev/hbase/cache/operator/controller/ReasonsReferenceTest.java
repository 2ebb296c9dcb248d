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

  /** The doc's sections in order, each the rows of one enum. */
  static final List<Class<? extends Enum<?>>> SECTIONS =
      List.of(
          Reason.class, RollModel.EventReason.class, RollModel.Reason.class, Observation.Why.class);

  @Test
  void eachSectionHasARowForEveryConstantOfItsEnumAndNoOther() throws IOException {
    String doc = Files.readString(DOC);
    // the text before the first "## " is the introduction
    String[] sections = doc.split("(?m)^## ");
    assertThat(sections).as("sections of %s", DOC).hasSize(SECTIONS.size() + 1);
    for (int i = 0; i < SECTIONS.size(); i++) {
      String section = sections[i + 1];
      Set<String> rows =
          ROW.matcher(section).results().map(m -> m.group(1)).collect(Collectors.toSet());
      assertThat(rows)
          .as(
              "rows of section \"%s\" (%s)",
              section.lines().findFirst().orElse(""), SECTIONS.get(i))
          .containsExactlyInAnyOrderElementsOf(names(SECTIONS.get(i)));
    }
  }
}
