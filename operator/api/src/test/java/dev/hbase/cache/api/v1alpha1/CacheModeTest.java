package dev.hbase.cache.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CacheModeTest {
  @ParameterizedTest
  @EnumSource(CacheMode.class)
  void parsesEveryMode(CacheMode mode) {
    assertThat(CacheMode.parse(mode.name())).isEqualTo(mode);
  }

  @Test
  void heapIsRefusedWithTheReasonAndTheAlternative() {
    assertThatThrownBy(() -> CacheMode.parse("Heap"))
        .hasMessageContaining("no longer exists in HBase 2.x")
        .hasMessageContaining("Offheap");
  }

  @Test
  void unknownModeListsTheAllowedOnes() {
    assertThatThrownBy(() -> CacheMode.parse("Disk"))
        .hasMessageContaining("\"Disk\"")
        .hasMessageContaining(CacheMode.ALLOWED);
  }

  @Test
  void l2AndPersistenceFlags() {
    assertThat(CacheMode.Lru.hasL2()).isFalse();
    assertThat(CacheMode.MetaOnly.hasL2()).isFalse();
    assertThat(CacheMode.Offheap.hasL2()).isTrue();
    assertThat(CacheMode.Offheap.isFile()).isFalse();
    assertThat(CacheMode.File.isPersistent()).isFalse();
    assertThat(CacheMode.PersistentFile.isPersistent()).isTrue();
  }
}
