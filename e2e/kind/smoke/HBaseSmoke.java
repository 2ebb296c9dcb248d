import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Create a table pre-split over the RegionServers, write N rows, read every one back with Get and
 * count them with a Scan, then drop the table (unless KEEP). Exit 0 only if all N rows read back.
 * Runs with the image's HBase jars: java -cp smoke.jar:$(entrypoint.sh classpath) HBaseSmoke [rows] [table]
 */
public class HBaseSmoke {
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    TableName name = TableName.valueOf(args.length > 1 ? args[1] : "smoke");
    boolean keep = "1".equals(System.getenv("KEEP"));
    byte[] cf = Bytes.toBytes("f");
    Configuration conf = HBaseConfiguration.create();
    long t0 = System.nanoTime();
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      int servers = admin.getRegionServers().size();
      System.out.printf("live RegionServers: %d %s%n", servers, admin.getRegionServers());
      if (admin.tableExists(name)) {
        admin.disableTable(name);
        admin.deleteTable(name);
      }
      // one region per server: split keys row-<i*rows/servers>
      List<byte[]> splits = new ArrayList<>();
      for (int i = 1; i < Math.max(servers, 1); i++) {
        splits.add(Bytes.toBytes(String.format("row-%08d", (long) i * rows / servers)));
      }
      admin.createTable(TableDescriptorBuilder.newBuilder(name)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(cf)).build(), splits.toArray(new byte[0][]));
      long t1 = System.nanoTime();
      System.out.printf("created %s with %d regions in %d ms%n", name, splits.size() + 1, (t1 - t0) / 1_000_000);
      try (Table table = conn.getTable(name); RegionLocator locator = conn.getRegionLocator(name)) {
        Map<String, Integer> perServer = new TreeMap<>();
        for (HRegionLocation loc : locator.getAllRegionLocations()) {
          perServer.merge(loc.getServerName().getHostname(), 1, Integer::sum);
        }
        System.out.println("regions per server: " + perServer);
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < rows; i++) {
          puts.add(new Put(Bytes.toBytes(String.format("row-%08d", i)))
              .addColumn(cf, Bytes.toBytes("q"), Bytes.toBytes("value-" + i)));
        }
        table.put(puts);
        long t2 = System.nanoTime();
        System.out.printf("put %d rows in %d ms%n", rows, (t2 - t1) / 1_000_000);
        int ok = 0;
        for (int i = 0; i < rows; i++) {
          Result r = table.get(new Get(Bytes.toBytes(String.format("row-%08d", i))));
          if (("value-" + i).equals(Bytes.toString(r.getValue(cf, Bytes.toBytes("q"))))) ok++;
        }
        long t3 = System.nanoTime();
        int scanned = 0;
        try (ResultScanner sc = table.getScanner(new Scan())) {
          for (Result r : sc) scanned++;
        }
        long t4 = System.nanoTime();
        System.out.printf("get: %d/%d rows correct in %d ms; scan: %d rows in %d ms%n",
            ok, rows, (t3 - t2) / 1_000_000, scanned, (t4 - t3) / 1_000_000);
        if (!keep) {
          admin.disableTable(name);
          admin.deleteTable(name);
        }
        boolean pass = ok == rows && scanned == rows;
        System.out.println(pass ? "SMOKE OK" : "SMOKE FAILED");
        System.exit(pass ? 0 : 1);
      }
    }
  }
}
