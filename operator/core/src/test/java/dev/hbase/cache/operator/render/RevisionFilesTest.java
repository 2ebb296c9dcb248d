package dev.hbase.cache.operator.render;

import static dev.hbase.cache.operator.render.CacheMapGuardTest.HEAD;
import static dev.hbase.cache.operator.render.CacheMapGuardTest.plan;
import static org.assertj.core.api.Assertions.assertThat;

import dev.hbase.cache.api.v1alpha1.BlockCachePolicy;
import dev.hbase.cache.operator.plan.Plan;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The derived RegionServer ConfigMap as files per revision (issue 50, point 6): which keys it
 * holds, which it keeps for pods of older plans and which it lets go, the items that map a pod to
 * its revision's files, the revision that does not see other revisions' keys, and the size bound.
 */
class RevisionFilesTest {
  static final String CM = "p-rs-site";

  static final Map<String, String> A =
      Map.of(
          "hbase-site.xml", "<configuration><!-- A: L2 1Gi --></configuration>\n",
          "log4j2.properties", "rootLogger.level=info\n");
  static final Map<String, String> B =
      Map.of(
          "hbase-site.xml", "<configuration><!-- B: L2 2Gi --></configuration>\n",
          "log4j2.properties", "rootLogger.level=info\n");

  /** The items a pod of revision {@code files} mounts (created from a template rendered so). */
  static List<KeyToPath> itemsOf(Map<String, String> files) {
    return RevisionFiles.items(files, null, null, "rev");
  }

  static Set<String> keysOf(List<KeyToPath> items) {
    return items.stream().map(KeyToPath::getKey).collect(Collectors.toSet());
  }

  @Test
  void eachFileIsHeldUnderItsNameAndUnderAKeyOfItsContent() {
    var layout = RevisionFiles.layout(A, null, Set.of());
    String site = RevisionFiles.key("hbase-site.xml", A.get("hbase-site.xml"));
    String log4j = RevisionFiles.key("log4j2.properties", A.get("log4j2.properties"));
    assertThat(layout.data())
        .containsOnlyKeys("hbase-site.xml", "log4j2.properties", site, log4j)
        .containsEntry(site, A.get("hbase-site.xml"))
        .containsEntry("hbase-site.xml", A.get("hbase-site.xml"));
    assertThat(site).matches("hbase-site\\.xml\\.[0-9a-f]{16}");
    assertThat(RevisionFiles.isRevisionKey(site)).isTrue();
    assertThat(RevisionFiles.isRevisionKey("hbase-site.xml")).isFalse();
    assertThat(layout.missing()).isEmpty();
    // another content, another key; the same content, the same key; a ConfigMap key in any case
    assertThat(RevisionFiles.key("hbase-site.xml", B.get("hbase-site.xml"))).isNotEqualTo(site);
    assertThat(RevisionFiles.key("hbase-site.xml", A.get("hbase-site.xml"))).isEqualTo(site);
    String longName = "f".repeat(250) + ".xml";
    assertThat(RevisionFiles.key(longName, "x"))
        .hasSizeLessThanOrEqualTo(253)
        .matches("[-._a-zA-Z0-9]+")
        .isNotEqualTo(RevisionFiles.key(longName, "y"));
  }

  @Test
  void anOlderRevisionsKeysStayWhileAPodNamesThemAndGoOnceNoneDoes() {
    Map<String, String> onA = RevisionFiles.layout(A, null, Set.of()).data();
    Set<String> aKeys = keysOf(itemsOf(A));
    Set<String> bKeys = keysOf(itemsOf(B));

    // the plan changed to B while pods still run A: A's keys stay, with A's content
    var both = RevisionFiles.layout(B, onA, union(aKeys, bKeys));
    assertThat(both.data()).containsKeys(aKeys.toArray(String[]::new));
    assertThat(both.data()).containsKeys(bKeys.toArray(String[]::new));
    for (KeyToPath i : itemsOf(A)) {
      assertThat(both.data().get(i.getKey())).isEqualTo(A.get(i.getPath()));
    }
    // the plain names are the current revision's
    assertThat(both.data()).containsEntry("hbase-site.xml", B.get("hbase-site.xml"));
    // log4j2.properties did not change: A and B share its key
    assertThat(both.data()).hasSize(2 + 3);

    // the last pod on A rolled: A's hbase-site goes
    var after = RevisionFiles.layout(B, both.data(), bKeys);
    assertThat(after.data()).isEqualTo(RevisionFiles.layout(B, null, Set.of()).data());
    assertThat(after.data())
        .doesNotContainKey(RevisionFiles.key("hbase-site.xml", A.get("hbase-site.xml")));
  }

  @Test
  void whileWhatIsInUseIsNotKnownNoRevisionsKeyGoes() {
    Map<String, String> onA = RevisionFiles.layout(A, null, Set.of()).data();
    Map<String, String> withOldFile = new java.util.TreeMap<>(onA);
    withOldFile.put("core-site.xml", "<configuration/>"); // a file the base no longer has
    var kept = RevisionFiles.layout(B, withOldFile, null);
    assertThat(kept.data())
        .containsAllEntriesOf(
            RevisionFiles.layout(A, null, Set.of()).data().entrySet().stream()
                .filter(e -> RevisionFiles.isRevisionKey(e.getKey()))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)));
    // a plain file is the current revision's only (as before per-revision keys)
    assertThat(kept.data()).doesNotContainKey("core-site.xml");
  }

  @Test
  void aKeyInUseThatTheConfigMapDoesNotHoldIsMissingNotInvented() {
    String gone = RevisionFiles.key("hbase-site.xml", "<configuration><!-- C --></configuration>");
    var layout = RevisionFiles.layout(B, Map.of(), Set.of(gone, "hbase-site.xml"));
    assertThat(layout.missing()).containsExactly(gone);
    assertThat(layout.data()).doesNotContainKey(gone);
  }

  @Test
  void theKeysInUseAreTheTemplatesAndThePodsItemsOnTheDerivedConfigMapOnly() {
    StatefulSet sts = sts(volume(CM, itemsOf(B)), 3L, 3L);
    Pod onA = pod(volume(CM, itemsOf(A)));
    Pod otherMap = pod(volume("before-rs-site", itemsOf(Map.of("x", "y"))));
    Pod wholeMap = pod(volume(CM, null));
    Pod projected =
        pod(
            new VolumeBuilder()
                .withName("conf")
                .withNewProjected()
                .addNewSource()
                .withNewConfigMap()
                .withName(CM)
                .withItems(new KeyToPath("core-site.xml.0123456789abcdef", null, "core-site.xml"))
                .endConfigMap()
                .endSource()
                .endProjected()
                .build());
    Set<String> inUse =
        RevisionFiles.keysInUse(sts, List.of(onA, otherMap, wholeMap, projected), CM);
    assertThat(inUse)
        .containsExactlyInAnyOrderElementsOf(
            union(
                union(keysOf(itemsOf(A)), keysOf(itemsOf(B))),
                Set.of("core-site.xml.0123456789abcdef")));

    // the StatefulSet controller has not seen the latest template: it may be making a pod from an
    // older one right now, nothing may go
    assertThat(RevisionFiles.keysInUse(sts(volume(CM, itemsOf(B)), 4L, 3L), List.of(onA), CM))
        .isNull();
    // no status at all (no controller reported yet): what the template and pods name
    assertThat(RevisionFiles.keysInUse(sts(volume(CM, itemsOf(B)), 4L, null), List.of(), CM))
        .isEqualTo(keysOf(itemsOf(B)));
  }

  @Test
  void theItemsMapEachFilesKeyToItsNameOrToThePathTheTemplateGaveIt() {
    List<KeyToPath> items = RevisionFiles.items(B, volume(CM, null), "old", "new");
    assertThat(items)
        .extracting(KeyToPath::getKey, KeyToPath::getPath)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                RevisionFiles.key("hbase-site.xml", B.get("hbase-site.xml")), "hbase-site.xml"),
            org.assertj.core.groups.Tuple.tuple(
                RevisionFiles.key("log4j2.properties", B.get("log4j2.properties")),
                "log4j2.properties"));

    // a template of the user's with items of its own (the base's plain keys): their paths and
    // modes stay; a file they do not name comes at its own name unless that path is taken
    Volume users =
        volume(
            "hbase-site",
            List.of(
                new KeyToPath("hbase-site.xml", 0440, "conf/hbase-site.xml"),
                new KeyToPath("extra.xml", null, "log4j2.properties")));
    Map<String, String> withExtra = new java.util.TreeMap<>(B);
    withExtra.put("extra.xml", "<x/>");
    assertThat(RevisionFiles.items(withExtra, users, null, "new"))
        .extracting(KeyToPath::getKey, KeyToPath::getPath, KeyToPath::getMode)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(
                RevisionFiles.key("extra.xml", "<x/>"), "log4j2.properties", null),
            org.assertj.core.groups.Tuple.tuple(
                RevisionFiles.key("hbase-site.xml", B.get("hbase-site.xml")),
                "conf/hbase-site.xml",
                0440));
    // ...and so again from the operator's own items, a revision later
    List<KeyToPath> once = RevisionFiles.items(B, users, null, "r1");
    assertThat(RevisionFiles.items(A, volume(CM, once), "r1", "r2"))
        .extracting(KeyToPath::getPath)
        .contains("conf/hbase-site.xml");
  }

  /**
   * Upgrade from an operator before items: a template that mounts the whole ConfigMap for the
   * revision it already runs keeps doing so (items would change the pod template, and the
   * StatefulSet controller's new revision would roll every pod); the next plan brings them.
   */
  @Test
  void aTemplateOfTheCurrentRevisionWithoutItemsGetsNoneUntilTheNextRevision() {
    assertThat(RevisionFiles.items(B, volume(CM, null), "r1", "r1")).isNull();
    // the user's own plain items, the same: left as they are
    assertThat(
            RevisionFiles.items(
                B, volume(CM, List.of(new KeyToPath("hbase-site.xml", null, "x"))), "r1", "r1"))
        .isNull();
    assertThat(RevisionFiles.items(B, volume(CM, null), "r1", "r2")).isNotNull();
    // once the operator's items are there they stay, also for the same revision
    assertThat(RevisionFiles.items(B, volume(CM, itemsOf(B)), "r2", "r2")).isEqualTo(itemsOf(B));
  }

  @Test
  void theRevisionIsOfTheCurrentFilesAloneNotOfOtherRevisionsKeys() {
    Plan plan = plan("  mode: Lru\n");
    String revision = Desired.revision(plan, B, null);
    var layout =
        RevisionFiles.layout(
            B,
            RevisionFiles.layout(A, null, Set.of()).data(),
            union(keysOf(itemsOf(A)), keysOf(itemsOf(B))));
    // the ConfigMap's data is another map than the files the revision hashes: a revision of it
    // would change whenever a pod of an older plan went, and start a roll
    assertThat(Desired.revision(plan, layout.data(), null)).isNotEqualTo(revision);
    assertThat(layout.data()).containsAllEntriesOf(B);
    // the patch's revision is the one given, its items the files' keys
    var patch =
        Desired.regionServerPatch(
            Serialization.unmarshal(HEAD + "  mode: Lru\n", BlockCachePolicy.class),
            plan,
            revision,
            new ContainerBuilder().withName("regionserver").build(),
            "config",
            null,
            Desired.DEFAULT_INFO_PORT,
            itemsOf(B));
    var template = patch.getSpec().getTemplate();
    assertThat(template.getMetadata().getAnnotations())
        .containsEntry(Desired.HASH_ANNOTATION, revision);
    assertThat(template.getSpec().getVolumes())
        .filteredOn(v -> v.getName().equals("config"))
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getConfigMap().getName()).isEqualTo(CM);
              assertThat(v.getConfigMap().getItems()).isEqualTo(itemsOf(B));
            });
  }

  @Test
  void theSizeIsBoundedWithEveryRevisionInUseCounted() {
    String big = "x".repeat(300 * 1024);
    Map<String, String> a = Map.of("hbase-site.xml", big + "a");
    Map<String, String> b = Map.of("hbase-site.xml", big + "b");
    var alone = RevisionFiles.layout(b, null, Set.of());
    assertThat(alone.fits()).isTrue(); // ~600 KiB: the plain file and its key
    var withA =
        RevisionFiles.layout(
            b,
            RevisionFiles.layout(a, null, Set.of()).data(),
            union(keysOf(itemsOf(a)), keysOf(itemsOf(b))));
    assertThat(withA.data()).containsKey(RevisionFiles.key("hbase-site.xml", big + "a"));
    assertThat(withA.bytes()).isGreaterThan(RevisionFiles.MAX_BYTES);
    assertThat(withA.fits()).isFalse();
    // once A is not in use it fits again
    assertThat(RevisionFiles.layout(b, withA.data(), keysOf(itemsOf(b))).fits()).isTrue();
    // the bound counts keys and values in bytes
    assertThat(RevisionFiles.size(Map.of("ké", "vé"))).isEqualTo(6);
    // a base of more than half the bound cannot fit at all (it is held twice)
    assertThat(RevisionFiles.layout(Map.of("f", "x".repeat(451 * 1024)), null, Set.of()).fits())
        .isFalse();
  }

  // ------------------------------------------------------------------ helpers

  static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> s = new HashSet<>(a);
    s.addAll(b);
    return s;
  }

  static Volume volume(String configMap, List<KeyToPath> items) {
    return new VolumeBuilder()
        .withName("config")
        .withNewConfigMap()
        .withName(configMap)
        .withItems(items)
        .endConfigMap()
        .build();
  }

  static Pod pod(Volume v) {
    return new PodBuilder()
        .withNewMetadata()
        .withName("rs-0")
        .endMetadata()
        .withNewSpec()
        .addToVolumes(v)
        .endSpec()
        .build();
  }

  static StatefulSet sts(Volume v, Long generation, Long observed) {
    var b =
        new StatefulSetBuilder()
            .withNewMetadata()
            .withName("rs")
            .withGeneration(generation)
            .endMetadata()
            .withNewSpec()
            .withNewTemplate()
            .withNewSpec()
            .addToVolumes(v)
            .endSpec()
            .endTemplate()
            .endSpec();
    if (observed != null) {
      b.withNewStatus().withObservedGeneration(observed).endStatus();
    }
    return b.build();
  }
}
