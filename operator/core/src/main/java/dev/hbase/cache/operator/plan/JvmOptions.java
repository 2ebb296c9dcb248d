package dev.hbase.cache.operator.plan;

import dev.hbase.cache.api.v1alpha1.spec.JvmSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which {@code jvm.extraOptions} a policy author may add to every RegionServer: an allow-list. The
 * author holds rights in one namespace; the options run in processes the operator starts on their
 * behalf, so an option that runs a command ({@code -XX:OnError}), loads code (agents, {@code
 * -XX:Flags}, {@code @argfiles}), writes a file ({@code -Xlog:...:file=}, {@code -XX:HeapDumpPath})
 * or undoes the memory plan ({@code -XX:MaxHeapSize}) is refused. What passes is what tuning needs
 * (docs/operations/security.md gives the reasons):
 *
 * <ul>
 *   <li>{@code -XX:} flags of the collectors, the JIT, metaspace and threads ({@link #TUNING});
 *   <li>{@code -Xss}, {@code -verbose:gc}, {@code -Xlog} to stdout or stderr only;
 *   <li>{@code -D} system properties outside the JDK's own namespaces ({@code java.}, {@code
 *       javax.}, {@code jdk.}, {@code sun.}, {@code com.sun.}: security managers, JMX remote,
 *       native libraries, TLS stores) and outside logging configuration (log4j can be pointed at a
 *       configuration that writes anywhere).
 * </ul>
 *
 * The operator's install chooses how far it trusts policy authors ({@link Trust}). Options the
 * planner sizes ({@link #sized}) are refused at every trust level: they are not a security matter
 * but would make the plan a lie.
 *
 * <p>The options the planner sets itself are here too, beside that list: {@link #line} writes a
 * plan's JVM options, the planner's first, then the author's.
 */
public final class JvmOptions {
  private JvmOptions() {}

  /** How far the operator's install trusts what policy authors put in jvm.extraOptions. */
  public enum Trust {
    /** The allow-list (the chart's default). */
    ALLOW_LIST,
    /** The allow-list plus JVM agents and the boot class path (chart: {@code allowJvmAgents}). */
    AGENTS,
    /**
     * Any option but those the planner sizes (chart: {@code allowAnyJvmOptions}): for clusters
     * whose policy authors may run code in the RegionServers anyway.
     */
    ANY;

    /** From the chart's two switches. */
    public static Trust of(boolean allowJvmAgents, boolean allowAnyJvmOptions) {
      return allowAnyJvmOptions ? ANY : allowJvmAgents ? AGENTS : ALLOW_LIST;
    }
  }

  /** Options that load code or change the boot class path: allowed from {@link Trust#AGENTS}. */
  public static final List<String> AGENT_OPTIONS =
      List.of("-javaagent:", "-agentpath:", "-agentlib:", "-Xbootclasspath");

  /**
   * What the planner sets: heap, direct memory, RAM detection, the collector, the OOM exit and the
   * DNS cache. The CRD's CEL refuses the same prefixes ({@code JvmSpec}).
   */
  static final List<String> SIZED =
      List.of(
          "-Xmx",
          "-Xms",
          "-XX:MaxHeapSize",
          "-XX:InitialHeapSize",
          "-XX:MinHeapSize",
          "-XX:MaxRAM",
          "-XX:InitialRAM",
          "-XX:MinRAM",
          "-XX:MaxDirectMemorySize",
          "-XX:+UseContainerSupport",
          "-XX:-UseContainerSupport",
          "-XX:-ExitOnOutOfMemoryError",
          "-Dsun.nio.MaxDirectMemorySize",
          "-Dsun.net.inetaddr.");

  /** JVM flags every RegionServer gets: a short DNS cache (restarted pods get new IPs). */
  static final String DNS_TTL = "-Dsun.net.inetaddr.ttl=1 -Dsun.net.inetaddr.negative.ttl=0";

  /**
   * The JVM options of a plan ({@code HBASE_REGIONSERVER_OPTS}): the collector, the OOM exit and
   * the DNS cache, then the policy's jvm.extraOptions, each of which {@link #refusal} has let
   * through.
   *
   * @param jvm the policy's jvm section, or null
   */
  static String line(JvmSpec jvm) {
    if (jvm == null) {
      jvm = new JvmSpec();
    }
    List<String> opts = new ArrayList<>();
    opts.add(
        jvm.getGc() == JvmSpec.Gc.ZGC
            ? "-XX:+UseZGC"
            : "-XX:+UseG1GC -XX:MaxGCPauseMillis=100 -XX:+ParallelRefProcEnabled");
    opts.add("-XX:+ExitOnOutOfMemoryError");
    opts.add(DNS_TTL);
    if (jvm.getExtraOptions() != null) {
      opts.addAll(jvm.getExtraOptions());
    }
    return String.join(" ", opts);
  }

  /**
   * Every option, at every trust level: one token of these characters (no shell metacharacters, no
   * spaces, no $). The CRD's CEL checks the same pattern.
   */
  static final Pattern CHARSET = Pattern.compile("^-[A-Za-z0-9_.,:+=/%*@-]+$");

  private static final Pattern USE_GC = Pattern.compile("^-XX:[+-]Use[A-Za-z0-9]*GC$");
  private static final Pattern XX =
      Pattern.compile("^-XX:(?:([+-])([A-Za-z0-9]+)|([A-Za-z0-9]+)=(.*))$");
  private static final Pattern XX_VALUE = Pattern.compile("^[A-Za-z0-9._%-]+$");
  private static final Pattern SYSTEM_PROPERTY = Pattern.compile("^-D([A-Za-z0-9_.-]+)(?:=(.*))?$");
  private static final Pattern XSS = Pattern.compile("^-Xss[0-9]+[kKmMgG]?$");
  private static final Pattern XLOG_WHAT = Pattern.compile("^[A-Za-z0-9*+=,_-]*$");
  private static final Pattern XLOG_DECORATORS = Pattern.compile("^[a-z,]*$");

  /**
   * {@code -XX} flags a policy may set: collector tuning (G1, ZGC), heap shape within the planned
   * heap, the JIT, metaspace, code cache, threads and diagnostics that print to stdout. None runs a
   * command, reads or writes a file, or loads code.
   */
  static final Set<String> TUNING =
      Set.of(
          // collectors (the collector itself is jvm.gc)
          "MaxGCPauseMillis",
          "GCPauseIntervalMillis",
          "ParallelGCThreads",
          "ConcGCThreads",
          "InitiatingHeapOccupancyPercent",
          "ParallelRefProcEnabled",
          "UseStringDeduplication",
          "G1HeapRegionSize",
          "G1NewSizePercent",
          "G1MaxNewSizePercent",
          "G1ReservePercent",
          "G1HeapWastePercent",
          "G1MixedGCCountTarget",
          "G1MixedGCLiveThresholdPercent",
          "G1RSetUpdatingPauseTimePercent",
          "G1UseAdaptiveIHOP",
          "G1PeriodicGCInterval",
          "G1ConcRefinementThreads",
          "ZAllocationSpikeTolerance",
          "ZCollectionInterval",
          "ZUncommit",
          "ZUncommitDelay",
          "SoftMaxHeapSize",
          "MaxTenuringThreshold",
          "InitialTenuringThreshold",
          "SurvivorRatio",
          "NewRatio",
          "TargetSurvivorRatio",
          "SoftRefLRUPolicyMSPerMB",
          "MinHeapFreeRatio",
          "MaxHeapFreeRatio",
          "ExplicitGCInvokesConcurrent",
          "DisableExplicitGC",
          "AlwaysPreTouch",
          "UseLargePages",
          "UseTransparentHugePages",
          "LargePageSizeInBytes",
          "UseNUMA",
          // the JIT and the code cache
          "TieredCompilation",
          "TieredStopAtLevel",
          "CICompilerCount",
          "ReservedCodeCacheSize",
          "InitialCodeCacheSize",
          "UseCodeCacheFlushing",
          "MaxInlineLevel",
          "MaxInlineSize",
          "FreqInlineSize",
          "InlineSmallCode",
          "OmitStackTraceInFastThrow",
          "UseCountedLoopSafepoints",
          "LoopStripMiningIter",
          "UseCompressedOops",
          "UseCompressedClassPointers",
          // metaspace, threads, processors
          "MetaspaceSize",
          "MaxMetaspaceSize",
          "CompressedClassSpaceSize",
          "ThreadStackSize",
          "MaxJavaStackTraceDepth",
          "ActiveProcessorCount",
          // diagnostics that only print (to stdout) or keep counters in memory
          "PrintFlagsFinal",
          "NativeMemoryTracking",
          "PerfDisableSharedMem",
          "UsePerfData",
          "UnlockExperimentalVMOptions",
          "UnlockDiagnosticVMOptions");

  /**
   * The system properties a policy may set: a short list of names, each harmless and asked for in
   * practice. Not a prefix rule: HBase, Hadoop, ZooKeeper, Netty and log4j read many system
   * properties as file paths, class names or URLs (log4j2 even case-insensitively and in
   * LOG4J2_STYLE), and Hadoop expands ${...} in its configuration from them.
   */
  static final Set<String> PROPERTIES =
      Set.of(
          // the IP stack: dual-stack clusters pin HBase's RPC to one family
          "java.net.preferIPv4Stack",
          "java.net.preferIPv6Addresses",
          // time zone and default charset of the logs and the web UI
          "user.timezone",
          "file.encoding",
          // Netty's buffer-leak detector (HBase's shaded Netty and the plain one): a debugging aid
          "io.netty.leakDetection.level",
          "org.apache.hbase.thirdparty.io.netty.leakDetection.level");

  /**
   * Why {@code option} is refused at this trust level, or empty when it may be added. The reason
   * names the option and what it would do.
   */
  public static Optional<String> refusal(String option, Trust trust) {
    if (option == null || option.isEmpty()) {
      return Optional.of("an empty jvm.extraOptions item");
    }
    if (!CHARSET.matcher(option).matches()) {
      return Optional.of(
          "\""
              + option
              + "\" must be one JVM option: '-' then letters, digits and _ . , : + = / % * @ -"
              + " only (no spaces, quotes or $, which a shell would expand): write each option as"
              + " its own item");
    }
    for (String s : SIZED) {
      if (option.startsWith(s)) {
        return Optional.of(
            option
                + " sets what the planner sizes (heap, direct memory, RAM detection, the OOM exit,"
                + " the DNS cache): use memory.* instead");
      }
    }
    if (USE_GC.matcher(option).matches()) {
      return Optional.of(
          option + " chooses the collector, which the planner sizes for: use jvm.gc");
    }
    if (trust == Trust.ANY) {
      return Optional.empty();
    }
    if (AGENT_OPTIONS.stream().anyMatch(option::startsWith)) {
      return trust == Trust.AGENTS
          ? Optional.empty()
          : Optional.of(
              option
                  + " loads code into every RegionServer (an agent or the boot class path): the"
                  + " operator allows it only when installed with allowJvmAgents=true");
    }
    return allowListed(option)
        .map(
            why ->
                option
                    + " is not on the operator's allow-list ("
                    + why
                    + "); an install with allowAnyJvmOptions=true trusts policy authors with any"
                    + " option");
  }

  /** Empty when the option is on the allow-list, else why not. */
  private static Optional<String> allowListed(String option) {
    if (option.startsWith("-XX:")) {
      Matcher m = XX.matcher(option);
      if (!m.matches()) {
        return Optional.of("-XX options are -XX:+Flag, -XX:-Flag or -XX:Flag=value");
      }
      String flag = m.group(2) != null ? m.group(2) : m.group(3);
      if (TUNING.contains(flag) && m.group(4) != null && !XX_VALUE.matcher(m.group(4)).matches()) {
        return Optional.of("a -XX value is a number, a size or a word: no paths");
      }
      return TUNING.contains(flag)
          ? Optional.empty()
          : Optional.of(
              "-XX:"
                  + flag
                  + " is none of the collector, JIT, metaspace and thread flags it allows; flags"
                  + " such as OnError, OnOutOfMemoryError, HeapDumpPath, ErrorFile, Flags and"
                  + " VMOptionsFile run commands, write files or read options from files");
    }
    if (option.startsWith("-D")) {
      Matcher m = SYSTEM_PROPERTY.matcher(option);
      if (!m.matches()) {
        return Optional.of("a system property is -Dname=value");
      }
      return PROPERTIES.contains(m.group(1))
          ? Optional.empty()
          : Optional.of(
              "the system properties it allows are "
                  + String.join(", ", new java.util.TreeSet<>(PROPERTIES))
                  + "; others can name files, classes or URLs that HBase, Hadoop, ZooKeeper,"
                  + " Netty or log4j act on, or undo the memory plan");
    }
    if (XSS.matcher(option).matches() || option.equals("-verbose:gc")) {
      return Optional.empty();
    }
    if (option.equals("-Xlog") || option.startsWith("-Xlog:")) {
      String[] parts = option.equals("-Xlog") ? new String[0] : option.substring(6).split(":", -1);
      boolean ok =
          parts.length <= 3
              && (parts.length < 1 || XLOG_WHAT.matcher(parts[0]).matches())
              && (parts.length < 2 || Set.of("", "stdout", "stderr").contains(parts[1]))
              && (parts.length < 3 || XLOG_DECORATORS.matcher(parts[2]).matches());
      return ok
          ? Optional.empty()
          : Optional.of(
              "-Xlog may log to stdout or stderr only (-Xlog:<tags>[:stdout|stderr[:decorators]]),"
                  + " never to a file");
    }
    return Optional.of(
        "allowed: -XX collector/JIT/metaspace/thread flags, -Xss, -verbose:gc, -Xlog to"
            + " stdout/stderr, -D properties outside java./javax./jdk./sun./com.sun./log4j");
  }
}
