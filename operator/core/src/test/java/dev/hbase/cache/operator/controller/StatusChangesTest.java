package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link StatusChanges#diff}: the fields bench-operator reports as changed by a status write. */
class StatusChangesTest {
  static final ObjectMapper JSON = new ObjectMapper();

  static Set<String> diff(String a, String b) throws Exception {
    Set<String> out = new TreeSet<>();
    StatusChanges.diff("status", JSON.readTree(a), JSON.readTree(b), out);
    return out;
  }

  @Test
  void leavesThatDifferAreNamedWithArrayPositionsFolded() throws Exception {
    assertThat(
            diff(
                "{\"rollout\":{\"phase\":\"Rolling\",\"inFlight\":[{\"pod\":\"a\",\"step\":\"Draining\"}]},\"x\":1}",
                "{\"rollout\":{\"phase\":\"Rolling\",\"inFlight\":[{\"pod\":\"a\",\"step\":\"Deleting\"}]},\"x\":1}"))
        .containsExactly("status.rollout.inFlight[].step");
  }

  @Test
  void addedRemovedAndResizedAreChangesToo() throws Exception {
    assertThat(diff("{\"a\":1,\"l\":[1]}", "{\"b\":1,\"l\":[1,2]}"))
        .containsExactly("status.a", "status.b", "status.l[] (entries)");
    assertThat(diff("{\"a\":{\"b\":[1,2]}}", "{\"a\":{\"b\":[1,2]}}")).isEmpty();
  }
}
