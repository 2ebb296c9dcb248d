package dev.hbase.cache.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicySpec;
import dev.hbase.cache.api.v1alpha1.CacheMode;
import dev.hbase.cache.api.v1alpha1.spec.MemorySpec;
import dev.hbase.cache.api.v1alpha1.spec.StorageSpec;
import dev.hbase.cache.api.v1alpha1.spec.TargetRef;
import dev.hbase.cache.api.v1alpha1.spec.TuningSpec;
import dev.hbase.cache.api.v1alpha1.status.Evidence;
import dev.hbase.cache.api.v1alpha1.status.Recommendation;
import dev.hbase.cache.operator.hbase.CacheRatios;
import dev.hbase.cache.operator.hbase.CacheSample;
import dev.hbase.cache.operator.hbase.HitCounts;
import dev.hbase.cache.operator.plan.Recommender.Advice;
import dev.hbase.cache.operator.plan.Recommender.ServerInterval;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The advice on metric series as the operator reads them: three RegionServers' cumulative /jmx
 * counters every 30 s for an hour, turned into interval deltas by {@link CacheRatios#between} the
 * way MetricsCollector does, gathered into a window by {@link Recommender#add}, then advised on.
 */
class RecommenderTest {
  static final Instant T0 = Instant.parse("2026-11-23T10:00:00Z");
  static final Duration EVERY = Duration.ofSeconds(30);
  static final Duration HOUR = Duration.ofHours(1);

  /**
   * One RegionServer's workload, per second: data reads and the share served from cache (with an L2
   * a cold read counts two misses, as HBase 2.6.4 counts it), evictions, failed insertions, GC
   * milliseconds; and its caches' capacities and fill.
   */
  record Load(
      double readsPerSec,
      double hitRatio,
      double evictionsPerSec,
      double failedPerSec,
      double gcMsPerSec,
      long l1Cap,
      double l1Full,
      long l2Cap,
      double l2Full) {}

  /** The window an hour of this load on three servers gives. */
  static Evidence window(Load load, Duration length) {
    Evidence w = null;
    List<CacheSample> last = new ArrayList<>();
    for (int s = 0; s < 3; s++) {
      last.add(sample(load, s, T0));
    }
    long[] gc = new long[3];
    for (Instant t = T0.plus(EVERY); !t.isAfter(T0.plus(length)); t = t.plus(EVERY)) {
      List<ServerInterval> batch = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        CacheSample next = sample(load, s, t);
        long gcNow = Math.round(load.gcMsPerSec() * Duration.between(T0, t).toSeconds());
        batch.add(
            new ServerInterval(
                "rs-" + s,
                t,
                CacheRatios.between(last.get(s), next),
                next.hasL2(),
                next.l1CapacityBytes(),
                next.l1UsedBytes(),
                next.l2CapacityBytes(),
                next.l2UsedBytes(),
                gcNow - gc[s]));
        gc[s] = gcNow;
        last.set(s, next);
      }
      w = Recommender.add(w, batch, t);
    }
    return w;
  }

  /** Cumulative counters of server {@code s} at {@code t} under a steady load. */
  static CacheSample sample(Load l, int s, Instant t) {
    double secs = Duration.between(T0, t).toSeconds() + 86_400; // up for a day before T0
    double reads = l.readsPerSec() * secs;
    long hits = Math.round(reads * l.hitRatio());
    long cold = Math.round(reads) - hits;
    boolean l2 = l.l2Cap() > 0;
    HitCounts data = new HitCounts(hits, l2 ? 2 * cold : cold);
    long l1Used = Math.round(l.l1Cap() * l.l1Full());
    long l2Used = Math.round(l.l2Cap() * l.l2Full());
    return new CacheSample(
        t,
        1_700_000_000_000L + s,
        "rs-" + s + ",16020," + s,
        data,
        data,
        l2 ? HitCounts.ZERO : data,
        l2 ? data : HitCounts.ZERO,
        l1Used,
        l.l1Cap() - l1Used,
        l2Used,
        l.l2Cap() - l2Used,
        1000,
        900,
        Math.round(l.evictionsPerSec() * secs),
        Math.round(l.failedPerSec() * secs),
        -1);
  }

  static BlockCachePolicySpec spec(CacheMode mode, String bucketCache) {
    BlockCachePolicySpec s =
        new BlockCachePolicySpec()
            .setTargetRef(new TargetRef().setName("rs"))
            .setHbaseSiteConfigMap("hbase-site")
            .setMode(mode);
    if (bucketCache != null) {
      s.setMemory(new MemorySpec().setBucketCache(new Quantity(bucketCache)));
    }
    return s;
  }

  static Plan plan(BlockCachePolicySpec spec, String limit) {
    PlanResult r = Planner.plan(spec, Sizes.parse(limit), null);
    assertThat(r).isInstanceOf(Plan.class);
    return (Plan) r;
  }

  static Advice advise(BlockCachePolicySpec spec, String limit, Load load) {
    Plan p = plan(spec, limit);
    // the window opens with the first interval that has reads, at its end
    Evidence w = window(load, HOUR.plus(EVERY));
    assertThat(Recommender.complete(w, HOUR, T0.plus(HOUR))).isFalse();
    assertThat(Recommender.complete(w, HOUR, T0.plus(HOUR).plus(EVERY))).isTrue();
    return Recommender.advise(spec, p, w, 0.95, JvmOptions.Trust.ALLOW_LIST);
  }

  // ---------------------------------------------------------------- Lru

  @Test
  void anLruThatFitsStays() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "8Gi").l1();
    Advice a = advise(spec, "8Gi", new Load(500, 0.99, 0, 0, 5, l1, 0.6, 0, 0));
    assertThat(a.differs()).isFalse();
    assertThat(a.mode()).isEqualTo(CacheMode.Lru);
    assertThat(a.message()).contains("fits the LRU").contains("data hit ratio 0.990");
  }

  @Test
  void anLruFullAndEvictingBelowTheTargetGetsAnOffheapL2SizedForTheWorkingSet() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "16Gi").l1();
    // full, evicting, 60% hit: the working set is ~l1 / 0.6
    Advice a = advise(spec, "16Gi", new Load(500, 0.6, 50, 0, 5, l1, 0.99, 0, 0));
    assertThat(a.differs()).isTrue();
    assertThat(a.mode()).isEqualTo(CacheMode.Offheap);
    long ws = Math.round(l1 / 0.6);
    assertThat(a.bucketCache()).isEqualTo(Recommender.l2For(ws, 0.95));
    assertThat(a.bucketCache()).isGreaterThanOrEqualTo((long) (ws * 0.95));
    assertThat(a.message()).contains("full and evicting at a hit ratio of 0.600 < 0.95");
    // the advice plans
    assertThat(
            Planner.plan(
                Recommender.candidate(spec, a.mode(), a.bucketCache()), Sizes.parse("16Gi"), null))
        .isInstanceOf(Plan.class);
  }

  @Test
  void anLruWhoseL2WouldNotFitTheMemoryLimitGetsAPersistentFile() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "4Gi").l1();
    // 10% hit: a working set ten times the LRU, more than 4Gi can hold off-heap
    Advice a = advise(spec, "4Gi", new Load(500, 0.1, 100, 0, 5, l1, 0.99, 0, 0));
    assertThat(a.mode()).isEqualTo(CacheMode.PersistentFile);
    assertThat(a.bucketCache()).isGreaterThan(4L * Sizes.GiB);
    assertThat(a.differs()).isTrue();
  }

  @Test
  void anLruThatEvictsWithGcTakingItsTimeMovesOffTheHeap() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "16Gi").l1();
    // the target hit ratio is met, but GC takes 8% of the time while the LRU churns
    Advice a = advise(spec, "16Gi", new Load(500, 0.97, 200, 0, 80, l1, 0.99, 0, 0));
    assertThat(a.mode()).isEqualTo(CacheMode.Offheap);
    assertThat(a.message()).contains("GC takes 8.0% of the time");
  }

  // ---------------------------------------------------------------- with an L2

  @Test
  void aFullL2BelowTheTargetGrowsInItsMode() {
    BlockCachePolicySpec spec = spec(CacheMode.PersistentFile, "2Gi");
    Plan p = plan(spec, "8Gi");
    Advice a =
        advise(spec, "8Gi", new Load(500, 0.5, 30, 0, 5, p.l1(), 0.5, p.bucketCache(), 0.99));
    assertThat(a.mode()).isEqualTo(CacheMode.PersistentFile);
    // working set ~2Gi / 0.5 = 4Gi: 0.95 x 4Gi x 1.25 = 4.75Gi
    assertThat(a.bucketCache()).isEqualTo(Recommender.l2For(4L * Sizes.GiB, 0.95));
    assertThat(Sizes.quantity(a.bucketCache())).isEqualTo("4864Mi");
    assertThat(a.differs()).isTrue();
  }

  @Test
  void anOffheapL2ThatCannotGrowInMemoryBecomesAPersistentFile() {
    BlockCachePolicySpec spec = spec(CacheMode.Offheap, "2Gi");
    Plan p = plan(spec, "4Gi");
    Advice a =
        advise(spec, "4Gi", new Load(500, 0.3, 30, 0, 5, p.l1(), 0.5, p.bucketCache(), 0.98));
    assertThat(a.mode()).isEqualTo(CacheMode.PersistentFile);
    assertThat(a.bucketCache()).isGreaterThan(4L * Sizes.GiB);
  }

  @Test
  void failedInsertionsAskForMoreWriterThreadsAndALongerQueue() {
    BlockCachePolicySpec spec = spec(CacheMode.PersistentFile, "8Gi");
    spec.setTuning(new TuningSpec().setWriterThreads(4));
    Plan p = plan(spec, "16Gi");
    Advice a =
        advise(spec, "16Gi", new Load(500, 0.97, 0, 2, 5, p.l1(), 0.5, p.bucketCache(), 0.6));
    assertThat(a.mode()).isEqualTo(CacheMode.PersistentFile);
    assertThat(a.bucketCache()).isEqualTo(p.bucketCache());
    assertThat(a.writerThreads()).isEqualTo(6);
    assertThat(a.writerQueueLength()).isEqualTo(128);
    assertThat(a.differs()).isTrue();
    assertThat(a.message()).contains("writerThreads 4 -> 6, writerQueueLength 64 -> 128");
  }

  @Test
  void anOffheapCacheWhoseContentsFitTheLruGoesBackOnHeapWhenGcIsLow() {
    BlockCachePolicySpec spec = spec(CacheMode.Offheap, "4Gi");
    Plan p = plan(spec, "16Gi");
    Plan lru = plan(spec(CacheMode.Lru, null), "16Gi");
    // 200Mi cached in all: far under the LRU an Lru policy gets at 16Gi
    double l2Full = (200.0 * Sizes.MiB - 0.1 * p.l1()) / p.bucketCache();
    Advice a =
        advise(spec, "16Gi", new Load(500, 0.99, 0, 0, 3, p.l1(), 0.1, p.bucketCache(), l2Full));
    assertThat(lru.l1()).isGreaterThan(2L * Sizes.GiB);
    assertThat(a.mode()).isEqualTo(CacheMode.Lru);
    assertThat(a.bucketCache()).isZero();
    assertThat(a.message()).contains("on-heap is fastest while it fits");
  }

  @Test
  void anL2ThatHoldsTheReadsStays() {
    BlockCachePolicySpec spec = spec(CacheMode.PersistentFile, "8Gi");
    spec.setStorage(new StorageSpec().setSize(new Quantity("10Gi")));
    Plan p = plan(spec, "16Gi");
    Advice a =
        advise(spec, "16Gi", new Load(500, 0.98, 0, 0, 5, p.l1(), 0.7, p.bucketCache(), 0.7));
    assertThat(a.differs()).isFalse();
    assertThat(a.mode()).isEqualTo(CacheMode.PersistentFile);
    assertThat(a.bucketCache()).isEqualTo(p.bucketCache());
  }

  // ---------------------------------------------------------------- the window

  @Test
  void tooFewReadsGiveNoAdvice() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "8Gi").l1();
    Advice a = advise(spec, "8Gi", new Load(0.05, 0.1, 1, 0, 5, l1, 0.99, 0, 0));
    assertThat(a.differs()).isFalse();
    assertThat(a.message()).contains("too few to advise on");
  }

  @Test
  void noReadsLeaveTheWindowAsItWas() {
    long l1 = 1L << 30;
    assertThat(window(new Load(0, 0, 0, 0, 5, l1, 0.5, 0, 0), HOUR)).isNull();
    Evidence w = window(new Load(10, 0.9, 0, 0, 5, l1, 0.5, 0, 0), Duration.ofMinutes(5));
    CacheSample s = sample(new Load(0, 0, 0, 0, 5, l1, 0.5, 0, 0), 0, T0);
    ServerInterval idle =
        new ServerInterval(
            "rs-0", T0.plusSeconds(400), CacheRatios.between(s, s), false, l1, l1 / 2, 0, 0, 100L);
    assertThat(Recommender.add(w, List.of(idle), T0.plusSeconds(400))).isSameAs(w);
  }

  @Test
  void theWindowCountsReadsOnceAndGcAsAShareOfTheTime() {
    long l1 = 1L << 30;
    Evidence w = window(new Load(100, 0.8, 2, 0, 30, 0, 0, l1, 0.5), HOUR);
    assertThat(w.getFrom()).isEqualTo(T0.plus(EVERY).toString());
    assertThat(w.getTo()).isEqualTo(T0.plus(HOUR).toString());
    // 3 servers x 100 reads/s x 3600 s (the first interval's reads opened it), cold reads once
    assertThat(w.getDataReads()).isEqualTo(3 * 100 * 3600L);
    assertThat(w.getDataHitRatio()).isEqualTo(0.8);
    assertThat(w.getEvictions()).isEqualTo(3 * 2 * 3600L);
    assertThat(w.getGcTimeFraction()).isEqualTo(0.03);
    assertThat(w.getL2UsedFraction()).isEqualTo(0.5);
    assertThat(w.getWorkingSetBytes()).isEqualTo(l1 / 2);
  }

  @Test
  void aWindowGatheredUnderAnotherPlanIsNotAdvisedOn() {
    // seen on kind: a window of 640Mi L2s advised on after the plan had become 512Mi
    BlockCachePolicySpec spec = spec(CacheMode.PersistentFile, "640Mi");
    Plan p = plan(spec, "4Gi");
    Evidence w =
        window(
            new Load(100, 0.99, 0, 0, 5, p.l1(), 0.3, p.bucketCache(), 0.3), Duration.ofMinutes(5));
    assertThat(Recommender.gatheredUnder(w, p)).isTrue();
    // HBase reports a bit less than planned: still the same settings
    w.setL2CapacityBytes(p.bucketCache() - (1L << 20)).setL1CapacityBytes((long) (p.l1() * 0.93));
    assertThat(Recommender.gatheredUnder(w, p)).isTrue();
    assertThat(Recommender.gatheredUnder(w, plan(spec(CacheMode.PersistentFile, "512Mi"), "4Gi")))
        .isFalse();
    assertThat(Recommender.gatheredUnder(w, plan(spec(CacheMode.Lru, null), "4Gi"))).isFalse();
  }

  @Test
  void aServerWithOtherCacheSizesStartsANewWindow() {
    long l1 = 1L << 30;
    Evidence w = window(new Load(100, 0.8, 0, 0, 5, l1, 0.5, 0, 0), HOUR);
    CacheSample a = sample(new Load(100, 0.8, 0, 0, 5, 2 * l1, 0.5, 0, 0), 0, T0.plus(HOUR));
    CacheSample b =
        sample(new Load(100, 0.8, 0, 0, 5, 2 * l1, 0.5, 0, 0), 0, T0.plus(HOUR).plus(EVERY));
    Instant at = T0.plus(HOUR).plus(EVERY);
    Evidence next =
        Recommender.add(
            w,
            List.of(
                new ServerInterval(
                    "rs-0", at, CacheRatios.between(a, b), false, 2 * l1, l1, 0, 0, null)),
            at);
    assertThat(next.getFrom()).isEqualTo(at.toString());
    assertThat(next.getDataReads()).isEqualTo(100 * 30L);
    assertThat(next.getL1CapacityBytes()).isEqualTo(2 * l1);
  }

  @Test
  void aRecommendationTheUserFollowedNoLongerDiffers() {
    BlockCachePolicySpec spec = spec(CacheMode.Lru, null);
    long l1 = plan(spec, "4Gi").l1();
    Advice a = advise(spec, "4Gi", new Load(500, 0.1, 100, 0, 5, l1, 0.99, 0, 0));
    Recommendation r =
        new Recommendation()
            .setMode(a.mode().name())
            .setBucketCache(Sizes.quantity(a.bucketCache()))
            .setDiffers(a.differs());
    assertThat(Recommender.stillDiffers(r, spec, plan(spec, "4Gi"))).isTrue();
    // followed: the mode and the size it names
    BlockCachePolicySpec followed = Recommender.candidate(spec, a.mode(), a.bucketCache());
    assertThat(Recommender.stillDiffers(r, followed, plan(followed, "4Gi"))).isFalse();
    // the mode, but half the size
    BlockCachePolicySpec half = Recommender.candidate(spec, a.mode(), a.bucketCache() / 2);
    assertThat(Recommender.stillDiffers(r, half, plan(half, "4Gi"))).isTrue();
    // more writer threads: followed only once the policy names them
    r.setWriterThreads(5);
    assertThat(Recommender.stillDiffers(r, followed, plan(followed, "4Gi"))).isTrue();
    followed.setTuning(new TuningSpec().setWriterThreads(5));
    assertThat(Recommender.stillDiffers(r, followed, plan(followed, "4Gi"))).isFalse();
    // a recommendation to keep the settings never differs
    assertThat(Recommender.stillDiffers(r.setDiffers(false), spec, plan(spec, "4Gi"))).isFalse();
  }

  @Test
  void followingARecommendationWritesWhatAUserWouldAndOnlyWhatPlans() {
    // Lru -> Offheap: the mode and the L2, the rest of the policy as it was
    BlockCachePolicySpec lru = spec(CacheMode.Lru, null);
    Recommendation toOffheap =
        new Recommendation().setMode("Offheap").setBucketCache("768Mi").setDiffers(true);
    Recommender.Following f =
        Recommender.following(lru, toOffheap, plan(lru, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.refused()).isNull();
    assertThat(f.spec().getMode()).isEqualTo(CacheMode.Offheap);
    assertThat(f.spec().getMemory().getBucketCache()).isEqualTo(new Quantity("768Mi"));
    assertThat(f.spec().getTargetRef().getName()).isEqualTo("rs");
    assertThat(f.spec().getHbaseSiteConfigMap()).isEqualTo("hbase-site");
    assertThat(Recommender.stillDiffers(toOffheap, f.spec(), plan(f.spec(), "4Gi"))).isFalse();
    assertThat(lru.getMode()).as("the policy's own spec is not touched").isEqualTo(CacheMode.Lru);

    // a bigger persistent L2: an explicit volume size that still holds it is kept ...
    BlockCachePolicySpec pf =
        spec(CacheMode.PersistentFile, "1Gi")
            .setStorage(new StorageSpec().setSize(new Quantity("10Gi")));
    Recommendation bigger =
        new Recommendation().setMode("PersistentFile").setBucketCache("2560Mi").setDiffers(true);
    f = Recommender.following(pf, bigger, plan(pf, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.spec().getMemory().getBucketCache()).isEqualTo(new Quantity("2560Mi"));
    assertThat(f.spec().getStorage().getSize()).isEqualTo(new Quantity("10Gi"));
    // ... one too small for it would have to grow, as the planner refuses it with 3Gi ...
    pf.getStorage().setSize(new Quantity("3Gi"));
    assertThat(
            Planner.plan(
                Recommender.candidate(pf, CacheMode.PersistentFile, 2560 * Sizes.MiB)
                    .setStorage(new StorageSpec().setSize(new Quantity("3Gi"))),
                4L * Sizes.GiB,
                null))
        .as("3Gi does not hold a 2560Mi L2 and its allowance")
        .isInstanceOf(Refusal.class);
    // ... and growing the volumes to fit (permanent: a PVC never shrinks) is left to the user
    f = Recommender.following(pf, bigger, plan(pf, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.spec()).isNull();
    assertThat(f.refused())
        .isEqualTo(
            "its cache volumes would grow from 3Gi to 4Gi per RegionServer; a volume never"
                + " shrinks and the operator never deletes one, so autoTune Apply leaves storage to"
                + " you: give storage.size room for it, or follow the advice yourself");
    // as is creating them (Lru -> PersistentFile)
    Recommendation toFile =
        new Recommendation().setMode("PersistentFile").setBucketCache("1Gi").setDiffers(true);
    f = Recommender.following(lru, toFile, plan(lru, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.spec()).isNull();
    assertThat(f.refused()).startsWith("it needs new cache volumes of 2Gi per RegionServer;");

    // the writer settings alone: mode, L2 and volume as they were
    Recommendation writers =
        new Recommendation()
            .setMode("PersistentFile")
            .setBucketCache("1Gi")
            .setWriterThreads(6)
            .setWriterQueueLength(128)
            .setDiffers(true);
    f = Recommender.following(pf, writers, plan(pf, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.spec().getStorage().getSize()).isEqualTo(new Quantity("3Gi"));
    assertThat(f.spec().getMemory().getBucketCache()).isEqualTo(new Quantity("1Gi"));
    assertThat(f.spec().getTuning().getWriterThreads()).isEqualTo(6);
    assertThat(f.spec().getTuning().getWriterQueueLength()).isEqualTo(128);
    assertThat(Recommender.stillDiffers(writers, f.spec(), plan(f.spec(), "4Gi"))).isFalse();

    // advice that no longer plans (the memory limit shrank since): the planner's reason, no spec
    Recommendation tooBig =
        new Recommendation().setMode("Offheap").setBucketCache("8Gi").setDiffers(true);
    f = Recommender.following(lru, tooBig, plan(lru, "4Gi"), JvmOptions.Trust.ALLOW_LIST);
    assertThat(f.spec()).isNull();
    assertThat(f.refused()).isNotBlank();
  }
}
