package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CacheRatiosTest {

  static final Instant T0 = Instant.parse("2026-11-21T08:00:00Z");
  static final long START = T0.minusSeconds(600).toEpochMilli();

  static CacheSample sample(
      Instant at,
      long start,
      long dataHits,
      long dataMisses,
      long l2Hits,
      long l2Misses,
      long evictions) {
    return new CacheSample(
        at,
        start,
        "rs,16020," + start,
        new HitCounts(dataHits, dataMisses),
        new HitCounts(dataHits + 10, dataMisses + 1),
        new HitCounts(10, 1),
        new HitCounts(l2Hits, l2Misses),
        1000,
        9000,
        5000,
        95000,
        10,
        8,
        evictions,
        0,
        -1);
  }

  @Test
  void intervalRatioComesFromCountDeltasNotFromCumulativeFigures() {
    CacheSample before = sample(T0, START, 900, 100, 900, 100, 5);
    CacheSample after = sample(T0.plusSeconds(30), START, 950, 150, 950, 150, 7);

    CacheDelta d = CacheRatios.between(before, after);

    assertThat(d.interval()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.data()).isEqualTo(new HitCounts(50, 50));
    assertThat(d.data().ratio()).hasValue(0.5);
    assertThat(CacheRatios.cumulative(after).data().ratio().getAsDouble())
        .isCloseTo(950.0 / 1100, within(1e-9));
    assertThat(d.evictions()).isEqualTo(2);
    assertThat(d.restarts()).isZero();
  }

  @Test
  void noTrafficMeansNoRatioNotZeroOrNaN() {
    CacheSample s = sample(T0, START, 900, 100, 900, 100, 0);
    CacheDelta d = CacheRatios.between(s, sample(T0.plusSeconds(10), START, 900, 100, 900, 100, 0));

    assertThat(d.data().ratio()).isEmpty();
    assertThat(d.data().ratioOrNull()).isNull();
    assertThat(d.l2().ratioOrNull()).isNull();
  }

  @Test
  void aRestartStartsTheCountersAgainFromZero() {
    CacheSample before = sample(T0, START, 9000, 1000, 9000, 1000, 50);
    long restartedAt = T0.plusSeconds(20).toEpochMilli();
    CacheSample after = sample(T0.plusSeconds(30), restartedAt, 30, 10, 30, 10, 0);

    CacheDelta d = CacheRatios.between(before, after);

    assertThat(d.restarts()).isEqualTo(1);
    assertThat(d.data()).isEqualTo(new HitCounts(30, 10));
    assertThat(d.evictions()).isZero();
    assertThat(CacheRatios.cumulative(after).interval()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void countersGoingDownAlsoMeanARestartWhenTheStartTimeIsUnknown() {
    CacheSample before = sample(T0, 0, 9000, 1000, 9000, 1000, 50);
    CacheSample after = sample(T0.plusSeconds(30), 0, 9000, 20, 9000, 20, 50);

    assertThat(CacheRatios.between(before, after).restarts()).isEqualTo(1);
    assertThat(CacheRatios.between(before, after).data()).isEqualTo(new HitCounts(9000, 20));
  }

  @Test
  void aggregationSumsCountsInsteadOfAveragingRatios() {
    // pod a: 1 lookup, a hit (100%); pod b: 1000 lookups, 100 hits (10%)
    CacheDelta a =
        CacheRatios.between(
            sample(T0, START, 0, 0, 0, 0, 0), sample(T0.plusSeconds(30), START, 1, 0, 1, 0, 0));
    CacheDelta b =
        CacheRatios.between(
            sample(T0, START, 0, 0, 0, 0, 0),
            sample(T0.plusSeconds(30), START, 100, 900, 100, 900, 3));

    CacheDelta sum = CacheRatios.aggregate(List.of(a, b));

    assertThat(sum.data()).isEqualTo(new HitCounts(101, 900));
    assertThat(sum.data().ratio().getAsDouble()).isCloseTo(101.0 / 1001, within(1e-9));
    assertThat(sum.evictions()).isEqualTo(3);
    assertThat(CacheRatios.aggregate(List.of()).data().ratio()).isEmpty();
  }

  @Test
  void dataReadHitRatioUndoesTheDoubleCountedMissesOfACombinedCache() {
    // measured on 2.6.4: 200 cold + 200 warm gets -> 200 data hits, 400 data misses with an L2
    assertThat(CacheRatios.dataReadHitRatio(new HitCounts(200, 400), true)).isEqualTo(0.5);
    assertThat(CacheRatios.dataReadHitRatio(new HitCounts(200, 200), false)).isEqualTo(0.5);
    assertThat(CacheRatios.dataReadHitRatio(HitCounts.ZERO, true)).isNull();
    assertThat(CacheRatios.dataReadHitRatio(new HitCounts(0, 2), true)).isEqualTo(0.0);
  }

  @Test
  void retainedFraction() {
    assertThat(CacheRatios.retainedFraction(135217152, 135217152)).isEqualTo(1.0);
    assertThat(CacheRatios.retainedFraction(200, 100)).isEqualTo(0.5);
    assertThat(CacheRatios.retainedFraction(0, 100)).isNull();
  }

  @Test
  void serverIdParsesHBaseNames() {
    ServerId id = ServerId.parse("rs-0.hbase.default.svc.cluster.local,16020,1795246571123");
    assertThat(id.host()).isEqualTo("rs-0.hbase.default.svc.cluster.local");
    assertThat(id.port()).isEqualTo(16020);
    assertThat(id.toString()).isEqualTo("rs-0.hbase.default.svc.cluster.local,16020,1795246571123");
    assertThat(id.sameEndpoint(new ServerId("RS-0.hbase.default.svc.cluster.local", 16020, 1)))
        .isTrue();
    assertThat(
            id.sameEndpoint(
                new ServerId("rs-0.hbase.default.svc.cluster.local", 16021, 1795246571123L)))
        .isFalse();
  }

  static CacheSample at(String host, Instant at, long start, long dataHits, long dataMisses) {
    return new CacheSample(
        at,
        start,
        host + ",16020," + start,
        new HitCounts(dataHits, dataMisses),
        new HitCounts(dataHits, dataMisses),
        HitCounts.ZERO,
        new HitCounts(dataHits, dataMisses),
        1000,
        9000,
        5000,
        95000,
        10,
        8,
        0,
        0,
        -1);
  }

  @Test
  void servedFromCacheSumsEveryServersReadsInTheWindowAcrossARestart() {
    Instant from = T0;
    Instant to = T0.plusSeconds(60);
    long restartedAt = T0.plusSeconds(20).toEpochMilli();
    List<CacheSample> samples =
        List.of(
            // a: 1000 warm reads before the window (not counted), 300 warm + 10 cold in it
            at("a", T0.minusSeconds(5), START, 1000, 0),
            at("a", T0.plusSeconds(30), START, 1200, 10),
            at("a", T0.plusSeconds(60), START, 1300, 20),
            at("a", T0.plusSeconds(90), START, 5000, 20), // after the window
            // b's old instance: 50 warm reads in the window before it stopped
            at("b", T0.minusSeconds(1), START, 400, 0),
            at("b", T0.plusSeconds(10), START, 450, 0),
            // its new instance started in the window: everything it counted is in it
            at("b", T0.plusSeconds(40), restartedAt, 100, 40),
            at("b", T0.plusSeconds(55), restartedAt, 150, 40));
    // served 300 + 50 + 150 = 500; cold reads count twice with an L2: (20 + 40) / 2 = 30
    assertThat(CacheRatios.servedFromCache(samples, from, to)).isCloseTo(500.0 / 530, within(1e-9));
    assertThat(CacheRatios.servedFromCache(samples, T0.plusSeconds(200), T0.plusSeconds(300)))
        .isNull();
  }
}
