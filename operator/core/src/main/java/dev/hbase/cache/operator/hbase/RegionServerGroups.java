package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableState;
import org.apache.hadoop.hbase.exceptions.DeserializationException;
import org.apache.hadoop.hbase.net.Address;
import org.apache.hadoop.hbase.protobuf.generated.HBaseProtos;
import org.apache.hadoop.hbase.protobuf.generated.RSGroupProtos;
import org.apache.hadoop.hbase.rsgroup.RSGroupInfo;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The RegionServer groups of a cluster, for the drain targets ({@code roll/DrainTargets}): which
 * group each server is in. HBase 2.5 and 2.6 keep them in the {@code hbase:rsgroup} table (the
 * {@code hbase-rsgroup} coprocessor; the 2.6 client has no Admin call for them, 3.0's has): one row
 * per group, its {@code m:i} cell an {@code RSGroupInfo} protobuf (name, servers, tables). A table
 * read, within the connection's operation timeout.
 *
 * <p>Read here, not with the client's {@code RSGroupTableAccessor} (what HBase's RegionMover uses,
 * HBASE-30323), because the cluster is a tenant's and its servers may be hostile (issue 49):
 *
 * <ul>
 *   <li>{@code getAllRSGroupInfo} scans the whole table and keeps every row: a server that keeps
 *       answering "more results" has the operator keep rows without end (each RPC answer is capped
 *       and weighed, {@link RpcAnswerCap}, {@link AnswerWeight}, their sum is not). Here the scan
 *       stops after {@link #MAX_GROUPS} + 1 answers, the servers listed in them are counted against
 *       {@link #MAX_SERVERS}, and a name kept is at most {@link #MAX_NAME} characters; past any of
 *       these the read fails with what was exceeded.
 *   <li>{@code ProtobufUtil.toGroupInfo} turns each group's {@code tables} into {@code
 *       TableName.valueOf}, which puts every name into HBase's static table-name cache, which it
 *       never empties (a CopyOnWriteArraySet scanned on every lookup): names a server makes up
 *       would grow the operator's heap and slow every table-name lookup of every tenant. Here only
 *       a group's name and its servers' host and port are used; the tables stay bytes in the parsed
 *       protobuf and go with it.
 *   <li>{@code isRSGroupsEnabled} is {@code Admin.tableExists}, whose meta read makes a {@code
 *       TableName} of the row key the server answers with; {@link #tableExists} reads the same cell
 *       and names the table itself.
 * </ul>
 *
 * Past a bound, the snapshot fails ({@link AdminHBaseCluster#snapshot()}: unreachable, with this
 * message) rather than leaving a drain to cross groups it could not read.
 */
final class RegionServerGroups {
  private RegionServerGroups() {}

  /** {@code hbase:rsgroup}, as HBase 2.5 and 2.6 name it ({@code RSGroupInfoManager}). */
  static final TableName TABLE =
      TableName.valueOf(NamespaceDescriptor.SYSTEM_NAMESPACE_NAME_STR, "rsgroup");

  /** The column of a group's row: {@code META_FAMILY_BYTES}, {@code META_QUALIFIER_BYTES}. */
  static final byte[] FAMILY = Bytes.toBytes("m");

  static final byte[] QUALIFIER = Bytes.toBytes("i");

  /**
   * The most groups (rows of {@code hbase:rsgroup}, {@code default}'s included) read. Clusters that
   * use groups have a handful to some tens (a group per tenant or workload: each needs servers of
   * its own); 256 leaves an order of magnitude above that, and is few enough rows to read at every
   * snapshot.
   */
  static final int MAX_GROUPS = 256;

  /**
   * The most servers listed across all groups, {@code default}'s row included (its row lists the
   * servers in no other group, so this bounds the cluster's size as the table lists it). A group of
   * a thousand servers is large, and the largest HBase clusters reported run a few thousand
   * RegionServers; 10,000 {@code host:port} keys are about a megabyte of heap.
   */
  static final int MAX_SERVERS = 10_000;

  /**
   * The longest group or host name read, in characters. A DNS name has at most 253, and HBase's
   * group names are alphanumerics someone typed. Without it the names kept would be bounded only by
   * the answers' sizes: up to {@link #MAX_GROUPS} cells of an answer's largest value each (256 KiB,
   * {@link AnswerWeight}), some 64 MiB of names held in every snapshot; with it, about 3 MB.
   */
  static final int MAX_NAME = 255;

  /**
   * {@code host:port} -> group for every server listed in a group other than {@code default}; empty
   * when the cluster has no {@code hbase:rsgroup} table. Throws when the table exists and cannot be
   * read, or lists more than {@link #MAX_GROUPS} groups or {@link #MAX_SERVERS} servers, or a group
   * or server of a name longer than {@link #MAX_NAME}: the snapshot then fails rather than letting
   * a drain cross groups.
   */
  static Map<String, String> read(Connection connection) throws IOException {
    if (!tableExists(connection)) {
      return Map.of();
    }
    Scan scan =
        new Scan()
            .addColumn(FAMILY, QUALIFIER)
            // the server stops after this many rows, and so does the client whatever it answers
            .setLimit(MAX_GROUPS + 1)
            .setCaching(MAX_GROUPS + 1)
            // each answer reaches the loop below as it comes: a row's one cell is never split, and
            // without this the client would join the parts of a row a server keeps sending without
            // end (CompleteScanResultCache) before handing over any
            .setAllowPartialResults(true);
    Map<String, String> out = new HashMap<>();
    int groups = 0;
    int servers = 0;
    try (Table table = connection.getTable(TABLE);
        ResultScanner scanner = table.getScanner(scan)) {
      for (Result row = scanner.next(); row != null; row = scanner.next()) {
        if (++groups > MAX_GROUPS) {
          throw new IOException(
              TABLE
                  + " lists more than "
                  + MAX_GROUPS
                  + " RegionServer groups, the most the operator reads: groups not read");
        }
        byte[] value = row.getValue(FAMILY, QUALIFIER);
        if (value == null) {
          continue;
        }
        RSGroupProtos.RSGroupInfo group = RSGroupProtos.RSGroupInfo.parseFrom(value);
        servers += group.getServersCount();
        if (servers > MAX_SERVERS) {
          throw new IOException(
              TABLE
                  + " lists more than "
                  + MAX_SERVERS
                  + " servers across its groups, the most the operator reads: groups not read");
        }
        if (RSGroupInfo.DEFAULT_GROUP.equals(group.getName())) {
          continue;
        }
        checkName(group.getName());
        for (HBaseProtos.ServerName s : group.getServersList()) {
          checkName(s.getHostName());
          // as ProtobufUtil.toGroupInfo checks them (a bad port or host fails the read)
          Address a = Address.fromParts(s.getHostName(), s.getPort());
          out.put(a.getHostName() + ":" + a.getPort(), group.getName());
        }
      }
    }
    // a cluster with the table but no group besides default: every server in default, no limit
    return out;
  }

  private static void checkName(String name) throws IOException {
    if (name.length() > MAX_NAME) {
      throw new IOException(
          TABLE
              + " names a group or server of more than "
              + MAX_NAME
              + " characters, the most the operator reads: groups not read");
    }
  }

  /**
   * Whether {@code hbase:rsgroup} exists: what {@code RSGroupTableAccessor.isRSGroupsEnabled} asks
   * ({@code Admin.tableExists}: the table's state cell in {@code hbase:meta} is there and parses),
   * but with this class's own {@link TableName} instead of one made from the row the server sends.
   */
  static boolean tableExists(Connection connection) throws IOException {
    try (Table meta = connection.getTable(TableName.META_TABLE_NAME)) {
      Result r =
          meta.get(
              new Get(TABLE.getName())
                  .addColumn(HConstants.TABLE_FAMILY, HConstants.TABLE_STATE_QUALIFIER));
      byte[] state = r.getValue(HConstants.TABLE_FAMILY, HConstants.TABLE_STATE_QUALIFIER);
      if (state == null) {
        return false;
      }
      TableState.parseFrom(TABLE, state);
      return true;
    } catch (DeserializationException e) {
      throw new IOException(e);
    }
  }
}
