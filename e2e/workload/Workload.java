import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;

/**
 * The e2e/demo workload: a small HBase client that runs in a pod of the HBase image
 * ({@code java -cp workload.jar:$(entrypoint.sh classpath) Workload ...}).
 *
 * <pre>
 * load  TABLE ROWS VALUE_BYTES REGIONS   create TABLE pre-split into REGIONS regions (dropped first
 *                                        if it exists), write ROWS rows, flush; then read every row
 *                                        once with a Scan that caches its blocks (warm-up)
 * read  TABLE ROWS THREADS RATE SECONDS  random Gets over rows [0, ROWS), RATE per second in total
 *                                        (0: unthrottled), for SECONDS (0: until killed); every
 *                                        value is checked
 * </pre>
 *
 * <p>{@code read} prints one line per second, for the e2e test to parse:
 *
 * <pre>
 * R epochMillis ok=N fail=M p50=x.x p99=x.x max=x.x h=i:c,i:c,...
 * </pre>
 *
 * where {@code h} is the latency histogram of that second (bucket index : count, see {@link
 * #bucketUpperMicros}), so percentiles over any window can be computed exactly to bucket precision.
 * A read fails when the client gives up (its retries and the operation timeout, 30 s) or the value
 * is wrong; each failure is also printed as {@code E epochMillis row exception}.
 *
 * <p>{@code spread TABLE} gives a server with none of TABLE's regions its share, then scans the
 * moved regions once; the administrator's commands ({@code decommission}, {@code recommission},
 * {@code decommissioned}) are here too; {@code balance} is {@code Balance.java}; on a
 * Kerberos-secured cluster, the login and {@code grant USER ACTIONS} are {@code Secured.java}. Over ~400
 * lines because each command is a few static methods over one connection set-up and one output
 * format, which the suite parses.
 */
public class Workload {
  static final byte[] CF = "f".getBytes(StandardCharsets.UTF_8);
  static final byte[] Q = "q".getBytes(StandardCharsets.UTF_8);
  /** Histogram buckets: upper bounds grow by 2^(1/4) from 50 us; the last one is open. */
  static final int BUCKETS = 80;

  static long bucketUpperMicros(int i) {
    return Math.round(50 * Math.pow(2, i / 4.0));
  }

  static int bucket(long micros) {
    for (int i = 0; i < BUCKETS - 1; i++) {
      if (micros <= bucketUpperMicros(i)) {
        return i;
      }
    }
    return BUCKETS - 1;
  }

  static byte[] row(long i) {
    return String.format("row-%08d", i).getBytes(StandardCharsets.UTF_8);
  }

  /** A value that says which row it belongs to (checked on read), padded to the wanted size. */
  static byte[] value(long i, int size) {
    byte[] head = ("value-" + i + "-").getBytes(StandardCharsets.UTF_8);
    byte[] v = new byte[Math.max(size, head.length)];
    System.arraycopy(head, 0, v, 0, head.length);
    // incompressible-ish filler, deterministic per row
    long x = i * 0x9E3779B97F4A7C15L + 1;
    for (int k = head.length; k < v.length; k++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      v[k] = (byte) ('a' + (int) ((x >>> 1) % 26));
    }
    return v;
  }

  static boolean valueOk(long i, byte[] got) {
    if (got == null) {
      return false;
    }
    byte[] head = ("value-" + i + "-").getBytes(StandardCharsets.UTF_8);
    return got.length >= head.length && Arrays.equals(Arrays.copyOf(got, head.length), head);
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: Workload load TABLE ROWS VALUE_BYTES REGIONS | read TABLE ROWS THREADS RATE SECONDS"
          + " | decommission HOST_PREFIX... | recommission HOST_PREFIX... | decommissioned | spread TABLE"
          + " | balance RUNS PAUSE_SECONDS | grant USER ACTIONS | give-back");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    // Fail a read within 30 s instead of HBase's 20 minutes: a failure must show up as a failure.
    conf.setInt("hbase.client.operation.timeout", 30_000);
    conf.setInt("hbase.rpc.timeout", 10_000);
    Secured.loginIfAsked(conf);
    switch (args[0]) {
      case "load" -> load(conf, TableName.valueOf(args[1]), Long.parseLong(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]));
      case "read" -> read(conf, TableName.valueOf(args[1]), Long.parseLong(args[2]), Integer.parseInt(args[3]),
          Integer.parseInt(args[4]), Integer.parseInt(args[5]));
      case "decommission", "recommission", "decommissioned" -> marks(conf, args[0], Arrays.copyOfRange(args, 1, args.length));
      case "give-back" -> giveBack(conf);
      case "spread" -> spread(conf, TableName.valueOf(args[1]));
      case "balance" -> Balance.run(conf, Integer.parseInt(args[1]), Integer.parseInt(args[2]));
      case "grant" -> {
        try {
          Secured.grant(conf, args[1], args[2]);
        } catch (Throwable t) {
          throw new IOException("grant " + args[1] + " " + args[2] + " failed", t);
        }
      }
      default -> {
        System.err.println("unknown command " + args[0]);
        System.exit(2);
      }
    }
  }

  /**
   * Sets (decommission, without moving a region) or clears the decommission marks of the live
   * RegionServers whose host name starts with one of the prefixes, as an administrator would with
   * the shell's decommission_regionservers / recommission_regionserver; prints the marks after
   * ("decommissioned": only prints them).
   */
  static void marks(Configuration conf, String what, String[] hostPrefixes) throws IOException {
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      if ("decommissioned".equals(what)) {
        System.out.printf("decommissioned now: %s%n", admin.listDecommissionedRegionServers());
        return;
      }
      List<ServerName> servers = new ArrayList<>();
      for (ServerName s : "decommission".equals(what) ? admin.getRegionServers() : admin.listDecommissionedRegionServers()) {
        if (Arrays.stream(hostPrefixes).anyMatch(h -> s.getHostname().startsWith(h))) {
          servers.add(s);
        }
      }
      if ("decommission".equals(what)) {
        if (servers.size() != hostPrefixes.length) {
          throw new IOException(what + ": " + servers + " do not match " + Arrays.toString(hostPrefixes) + " one to one");
        }
        admin.decommissionRegionServers(servers, false);
      } else {
        for (ServerName s : servers) { // every mark on these hosts, also an older instance's
          admin.recommissionRegionServer(s, List.of());
        }
      }
      System.out.printf("%s %s; decommissioned now: %s%n", what, servers, admin.listDecommissionedRegionServers());
    }
  }

  /**
   * HBase given back as an administrator would after a tool left it otherwise: the balancer switch
   * on, every decommission mark cleared (the kind suite's precondition, when the operator did not
   * within a minute). Prints what it found and the marks after ("decommissioned now: ...").
   */
  static void giveBack(Configuration conf) throws IOException {
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      boolean was = admin.balancerSwitch(true, true);
      List<ServerName> marked = admin.listDecommissionedRegionServers();
      for (ServerName s : marked) {
        admin.recommissionRegionServer(s, List.of());
      }
      System.out.printf("recommission %s (balancer was on: %s); decommissioned now: %s%n",
          marked, was, admin.listDecommissionedRegionServers());
    }
  }

  /**
   * Gives every live RegionServer that holds none of the table's regions its share of them (at
   * least one), each from the server holding the most (while that one holds two or more), as an administrator would with the
   * shell's move; prints the regions per server before and after. HBase's own stop (a pod the
   * operator did not stop) leaves the server that comes back with no regions until the balancer
   * runs, and a server with no regions has no blocks to cache.
   */
  static void spread(Configuration conf, TableName name) throws IOException {
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      Map<ServerName, List<byte[]>> held = regionsByServer(conn, admin, name);
      System.out.println("regions per server before: " + counts(held));
      List<ServerName> wereEmpty = new ArrayList<>();
      held.forEach((s, r) -> {
        if (r.isEmpty()) {
          wereEmpty.add(s);
        }
      });
      int share = held.values().stream().mapToInt(List::size).sum() / Math.max(1, held.size());
      List<String> movedRegions = new ArrayList<>();
      while (true) {
        ServerName empty = null;
        ServerName most = null;
        for (Map.Entry<ServerName, List<byte[]>> e : held.entrySet()) {
          if (empty == null && wereEmpty.contains(e.getKey()) && e.getValue().size() < Math.max(1, share)) {
            empty = e.getKey();
          }
          if (most == null || e.getValue().size() > held.get(most).size()) {
            most = e.getKey();
          }
        }
        if (empty == null || held.get(most).size() < 2) {
          break;
        }
        byte[] region = held.get(most).remove(0);
        try {
          admin.move(region, empty); // waits for the move's procedure (HBase 2.x)
          held.get(empty).add(region);
          movedRegions.add(new String(region, StandardCharsets.US_ASCII));
        } catch (IOException e) { // in transition, say: the next region of that server is tried
          System.out.printf("move of %s failed: %s%n", new String(region, StandardCharsets.US_ASCII), e);
        }
      }
      System.out.printf("moved %d; regions per server after: %s%n", movedRegions.size(), counts(regionsByServer(conn, admin, name)));
      if (!movedRegions.isEmpty()) {
        // a server that took regions holds none of their blocks: one scan of each (blocks cached,
        // as prefetch on open would have), so that its cache serves them at once, not after
        // minutes of random reads (~110 s for a third of the table at 200 reads/s, seen on kind)
        long t0 = System.nanoTime();
        long rows = 0;
        try (Table table = conn.getTable(name)) {
          for (RegionInfo r : admin.getRegions(name)) {
            if (!movedRegions.contains(r.getEncodedName())) {
              continue;
            }
            Scan scan = new Scan().withStartRow(r.getStartKey()).withStopRow(r.getEndKey()).setCacheBlocks(true).setCaching(100);
            try (ResultScanner sc = table.getScanner(scan)) {
              for (Result ignored : sc) {
                rows++;
              }
            }
          }
        }
        System.out.printf("warm-up scan of the %d moved regions on their new servers: %d rows in %d ms%n",
            movedRegions.size(), rows, (System.nanoTime() - t0) / 1_000_000);
      }
    }
  }

  static Map<ServerName, List<byte[]>> regionsByServer(Connection conn, Admin admin, TableName name) throws IOException {
    // live servers that may take regions (not decommissioned); regions elsewhere (a dead server
    // still in hbase:meta, none at all) are neither counted nor moved
    Map<ServerName, List<byte[]>> held = new TreeMap<>();
    for (ServerName s : admin.getRegionServers(true)) {
      held.put(s, new ArrayList<>());
    }
    try (RegionLocator locator = conn.getRegionLocator(name)) {
      locator.clearRegionLocationCache();
      for (HRegionLocation loc : locator.getAllRegionLocations()) {
        List<byte[]> on = loc.getServerName() == null ? null : held.get(loc.getServerName());
        if (on != null) {
          on.add(loc.getRegion().getEncodedNameAsBytes());
        }
      }
    }
    return held;
  }

  static Map<String, Integer> counts(Map<ServerName, List<byte[]>> held) {
    Map<String, Integer> m = new TreeMap<>();
    held.forEach((s, r) -> m.put(s.getAddress().toString(), r.size()));
    return m;
  }

  static void load(Configuration conf, TableName name, long rows, int valueBytes, int regions) throws IOException {
    long t0 = System.nanoTime();
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      System.out.printf("live RegionServers: %d%n", admin.getRegionServers().size());
      if (admin.tableExists(name)) {
        admin.disableTable(name);
        admin.deleteTable(name);
      }
      List<byte[]> splits = new ArrayList<>();
      for (int i = 1; i < regions; i++) {
        splits.add(row((long) i * rows / regions));
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(name)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(CF)).build(), splits.toArray(new byte[0][]));
      long t1 = System.nanoTime();
      try (BufferedMutator m = conn.getBufferedMutator(new BufferedMutatorParams(name).writeBufferSize(4 << 20))) {
        for (long i = 0; i < rows; i++) {
          m.mutate(new Put(row(i)).addColumn(CF, Q, value(i, valueBytes)));
        }
      }
      long t2 = System.nanoTime();
      System.out.printf("put %d rows of %d bytes in %d ms%n", rows, valueBytes, (t2 - t1) / 1_000_000);
      // Flush: reads must come from HFiles (through the block cache), not from the memstore.
      admin.flush(name);
      long t3 = System.nanoTime();
      System.out.printf("flushed in %d ms%n", (t3 - t2) / 1_000_000);
      try (Table table = conn.getTable(name); RegionLocator locator = conn.getRegionLocator(name)) {
        Map<String, Integer> perServer = new TreeMap<>();
        for (HRegionLocation loc : locator.getAllRegionLocations()) {
          perServer.merge(loc.getServerName().getHostname(), 1, Integer::sum);
        }
        System.out.println("regions per server: " + perServer);
        long scanned = 0;
        long bad = 0;
        try (ResultScanner sc = table.getScanner(new Scan().setCacheBlocks(true).setCaching(100))) {
          for (Result r : sc) {
            long i = Long.parseLong(new String(r.getRow(), StandardCharsets.UTF_8).substring(4));
            if (!valueOk(i, r.getValue(CF, Q))) {
              bad++;
            }
            scanned++;
          }
        }
        long t4 = System.nanoTime();
        System.out.printf("warm-up scan: %d rows (%d bad) in %d ms%n", scanned, bad, (t4 - t3) / 1_000_000);
        boolean pass = scanned == rows && bad == 0;
        System.out.println(pass ? "LOAD OK" : "LOAD FAILED");
        System.exit(pass ? 0 : 1);
      }
    }
  }

  static void read(Configuration conf, TableName name, long rows, int threads, int rate, int seconds) throws Exception {
    PrintStream out = System.out;
    AtomicLong ok = new AtomicLong();
    AtomicLong fail = new AtomicLong();
    AtomicLongArray hist = new AtomicLongArray(BUCKETS);
    AtomicLong maxMicros = new AtomicLong();
    long end = seconds > 0 ? System.currentTimeMillis() + seconds * 1000L : Long.MAX_VALUE;
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      // one warm-up Get so the first interval does not include the meta lookup
      try (Table t = conn.getTable(name)) {
        t.get(new Get(row(0)));
      }
      out.printf("READER START rows=%d threads=%d rate=%d%n", rows, threads, rate);
      out.flush();
      double perThreadIntervalNanos = rate > 0 ? 1e9 * threads / rate : 0;
      List<Thread> workers = new ArrayList<>();
      for (int w = 0; w < threads; w++) {
        Thread th = new Thread(() -> {
          try (Table table = conn.getTable(name)) {
            long next = System.nanoTime();
            while (System.currentTimeMillis() < end) {
              if (perThreadIntervalNanos > 0) {
                next += (long) perThreadIntervalNanos;
                long sleep = next - System.nanoTime();
                if (sleep > 0) {
                  Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                } else if (sleep < -1_000_000_000L) {
                  next = System.nanoTime(); // fell behind by > 1 s (a slow read): do not burst
                }
              }
              long i = ThreadLocalRandom.current().nextLong(rows);
              long t0 = System.nanoTime();
              boolean good;
              String err = null;
              try {
                Result r = table.get(new Get(row(i)));
                good = valueOk(i, r.getValue(CF, Q));
                if (!good) {
                  err = "wrong or missing value";
                }
              } catch (IOException e) {
                good = false;
                err = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
              }
              long micros = (System.nanoTime() - t0) / 1000;
              hist.incrementAndGet(bucket(micros));
              maxMicros.accumulateAndGet(micros, Math::max);
              if (good) {
                ok.incrementAndGet();
              } else {
                fail.incrementAndGet();
                synchronized (out) {
                  out.printf("E %d row-%08d %s%n", System.currentTimeMillis(),
                      i, err.length() > 300 ? err.substring(0, 300) : err);
                }
              }
            }
          } catch (Exception e) {
            synchronized (out) {
              out.println("E " + System.currentTimeMillis() + " worker died: " + e);
            }
          }
        }, "reader-" + w);
        th.setDaemon(true);
        th.start();
        workers.add(th);
      }
      long tick = System.currentTimeMillis() / 1000 * 1000 + 1000;
      while (System.currentTimeMillis() < end || workers.stream().anyMatch(Thread::isAlive)) {
        long sleep = tick - System.currentTimeMillis();
        if (sleep > 0) {
          Thread.sleep(sleep);
        }
        long[] h = new long[BUCKETS];
        long total = 0;
        for (int b = 0; b < BUCKETS; b++) {
          h[b] = hist.getAndSet(b, 0);
          total += h[b];
        }
        long o = ok.getAndSet(0);
        long f = fail.getAndSet(0);
        long mx = maxMicros.getAndSet(0);
        StringBuilder hs = new StringBuilder();
        for (int b = 0; b < BUCKETS; b++) {
          if (h[b] > 0) {
            hs.append(hs.length() == 0 ? "" : ",").append(b).append(':').append(h[b]);
          }
        }
        synchronized (out) {
          out.printf("R %d ok=%d fail=%d p50=%.1f p99=%.1f max=%.1f h=%s%n", tick, o, f,
              pct(h, total, 0.50) / 1000.0, pct(h, total, 0.99) / 1000.0, mx / 1000.0, hs);
          out.flush();
        }
        tick += 1000;
        if (System.currentTimeMillis() >= end && workers.stream().noneMatch(Thread::isAlive)) {
          break;
        }
      }
    }
    out.println("READER END");
  }

  /** The bucket upper bound (us) under which the fraction q of the reads fall. */
  static long pct(long[] h, long total, double q) {
    if (total == 0) {
      return 0;
    }
    long need = (long) Math.ceil(q * total);
    long seen = 0;
    for (int b = 0; b < BUCKETS; b++) {
      seen += h[b];
      if (seen >= need) {
        return bucketUpperMicros(b);
      }
    }
    return bucketUpperMicros(BUCKETS - 1);
  }
}
