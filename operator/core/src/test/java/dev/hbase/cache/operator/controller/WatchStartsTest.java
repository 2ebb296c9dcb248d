package dev.hbase.cache.operator.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchStartsTest {
  @Test
  void atMostMaxRunAndEachDoneLetsTheNextOneStartOnce() {
    WatchStarts starts = new WatchStarts(2);
    List<Runnable> running = new ArrayList<>();
    List<Integer> started = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      int n = i;
      starts.submit(
          done -> {
            started.add(n);
            running.add(done);
          });
    }
    assertThat(started).containsExactly(0, 1);
    Runnable first = running.get(0);
    first.run();
    first.run(); // a second done of the same start frees no second place
    assertThat(started).containsExactly(0, 1, 2);
    running.get(1).run();
    running.get(2).run();
    assertThat(started).containsExactly(0, 1, 2, 3, 4);
    running.get(3).run();
    running.get(4).run();
    // all done: two places free again
    starts.submit(done -> started.add(5));
    starts.submit(done -> started.add(6));
    starts.submit(done -> started.add(7));
    assertThat(started).endsWith(5, 6).doesNotContain(7);
  }
}
