import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BalanceRequest;
import org.apache.hadoop.hbase.client.BalanceResponse;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/** The workload's {@code balance} command: HBase's balancer run as its chore would run it. */
final class Balance {
  private Balance() {}

  /**
   * Runs HBase's balancer (the one the master is configured with) RUNS times, PAUSE_SECONDS apart,
   * as its chore would once a period. Prints whether the balancer switch is on, the regions per
   * server before and after each run (all regions, the system tables' too: what the operator's
   * Balanced condition counts) and each run's moves, "balanced after run N" for the first run that
   * leaves every live server within one region of the mean, and at the end "balanced after RUNS
   * runs" or "not balanced after RUNS runs". A run with the switch off does nothing (HBase returns
   * "not ran").
   */
  static void run(Configuration base, int runs, int pauseSeconds) throws Exception {
    // A balancer run returns once its moves are done (the cache-aware balancer paces them). Beside
    // make test-hbase that took longer than the reader's 10 s RPC timeout (kind step 6 of a .ci/run
    // of 76b44d3: "Call[methodName=Balance] ... rpcTimeout=9665ms"): the admin's calls get minutes,
    // several times what a run takes alone (seconds).
    Configuration conf = new Configuration(base);
    conf.setInt("hbase.rpc.timeout", 120_000);
    conf.setInt("hbase.client.operation.timeout", 300_000);
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      System.out.printf("balancer on: %s%n", admin.isBalancerEnabled());
      Map<String, Integer> counts = regionCounts(admin);
      System.out.printf("regions per server before: %s%n", counts);
      int first = 0; // the first run after which every server is within one of the mean
      for (int i = 1; i <= runs; i++) {
        BalanceResponse r = admin.balance(BalanceRequest.defaultInstance());
        Thread.sleep(pauseSeconds * 1000L); // its moves, and the servers' next load reports
        counts = regionCounts(admin);
        System.out.printf("balancer run %d: ran %s, moves calculated %d, executed %d; regions per server after: %s%n",
            i, r.isBalancerRan(), r.getMovesCalculated(), r.getMovesExecuted(), counts);
        if (first == 0 && withinOneOfTheMean(counts)) {
          first = i;
          System.out.printf("balanced after run %d%n", i);
        }
      }
      System.out.printf("%s after %d runs%n", withinOneOfTheMean(counts) ? "balanced" : "not balanced", runs);
    }
  }

  static Map<String, Integer> regionCounts(Admin admin) throws IOException {
    Map<String, Integer> m = new TreeMap<>();
    admin.getClusterMetrics(java.util.EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS))
        .getLiveServerMetrics()
        .forEach((s, metrics) -> m.put(s.getHostname().split("\\.")[0], metrics.getRegionMetrics().size()));
    return m;
  }

  static boolean withinOneOfTheMean(Map<String, Integer> counts) {
    double mean = counts.values().stream().mapToInt(Integer::intValue).average().orElse(0);
    return counts.size() >= 2 && counts.values().stream().allMatch(c -> Math.abs(c - mean) <= 1.0);
  }

}
