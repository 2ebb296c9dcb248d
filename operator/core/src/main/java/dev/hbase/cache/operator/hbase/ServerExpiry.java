package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.hbase.ExpireResult.Outcome;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.ClusterConnection;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Hbck;
import org.apache.hadoop.hbase.ipc.HBaseRpcControllerImpl;
import org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil;

/**
 * {@link HBaseCluster#expire} on the HBase client: the check that the instance is gone, then {@code
 * Hbck.scheduleServerCrashProcedures} for exactly its name.
 *
 * <p>Why that call (HBase 2.6.4's and 2.5.13's source, the same in both): the master's {@code
 * MasterRpcServices.scheduleServerCrashProcedure} calls {@code ServerManager.expireServer(name,
 * force=true)} unless a ServerCrashProcedure of that name is running; {@code expireServer} moves
 * the name from the online servers to the dead ones (a name not online is not added: an instance at
 * that host and port with another start code is untouched), deletes its draining znode and submits
 * the procedure: what a ZooKeeper session expiry of that server does. It checks nothing about the
 * server being alive: the master expires a live instance just the same (that RegionServer then
 * learns it is dead at its next report and aborts, its WAL fenced by the procedure's split), hence
 * the check here. Deleting the server's ephemeral znode instead would need write access to {@code
 * /hbase/rs} in ZooKeeper, which a secured cluster gives the HBase service principal only; the Hbck
 * call is one master RPC with the identity the operator already uses ({@code RA}: HBase 2.6.4
 * checks no ACL on it beyond reaching the master).
 *
 * <p>The check, which must prove the instance gone: the master lists that exact name live (else
 * {@link Outcome#NOT_LIVE}: nothing to do), and its RPC endpoint refuses the connection (nothing
 * listens: the process is gone) or answers as another instance (a restarted one, with a newer start
 * code). An endpoint that answers as that instance is {@link Outcome#ALIVE}; one that accepts the
 * connection and does not answer in time (a frozen process), or cannot be reached at all (no route,
 * no DNS name), proves nothing ({@link Outcome#UNPROVEN}). Both are refused.
 */
final class ServerExpiry {
  private ServerExpiry() {}

  /** The endpoint's answer. */
  record Probe(boolean gone, Outcome refusal, String detail) {}

  static ExpireResult expire(
      Connection connection, ClusterSnapshot snap, ServerId server, Duration timeout)
      throws HBaseClusterException {
    if (snap.live(server).isEmpty()) {
      return new ExpireResult(server, Outcome.NOT_LIVE, -1, "the master lists it live no more");
    }
    Probe p = probe(connection, server, timeout);
    if (!p.gone()) {
      return new ExpireResult(server, p.refusal(), -1, p.detail());
    }
    try (Hbck hbck = connection.getHbck()) {
      List<Long> pids = hbck.scheduleServerCrashProcedures(List.of(AdminHBaseCluster.name(server)));
      long pid = pids.isEmpty() ? -1 : pids.get(0);
      return new ExpireResult(
          server,
          Outcome.EXPIRED,
          pid,
          p.detail() + (pid < 0 ? "; the master had a crash procedure for it already" : ""));
    } catch (IOException | RuntimeException e) {
      if (AdminHBaseCluster.accessDenied(e)) {
        throw new HBaseClusterException.AccessDenied(
            "expire " + server + " refused by HBase's ACLs: " + e, e);
      }
      throw new HBaseClusterException("expire " + server + " failed: " + e, e);
    }
  }

  /**
   * Whether the instance is gone, from its endpoint: a TCP connect first (refused: nothing listens
   * there), then, if something listens, the RegionServer's own name over RPC ({@code
   * AdminService.getServerInfo}).
   */
  static Probe probe(Connection connection, ServerId server, Duration timeout) {
    int ms = (int) Math.max(1, timeout.toMillis());
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(server.host(), server.port()), ms);
    } catch (ConnectException refused) {
      return new Probe(true, null, "its endpoint refuses connections: " + refused.getMessage());
    } catch (SocketTimeoutException | UnknownHostException e) {
      return new Probe(false, Outcome.UNPROVEN, "its endpoint cannot be reached: " + e);
    } catch (IOException e) {
      return new Probe(false, Outcome.UNPROVEN, "its endpoint cannot be reached: " + e);
    }
    ServerName answered;
    try {
      HBaseRpcControllerImpl controller = new HBaseRpcControllerImpl();
      controller.setCallTimeout(ms);
      var stub = ((ClusterConnection) connection).getAdmin(AdminHBaseCluster.name(server));
      answered =
          ProtobufUtil.toServerName(ProtobufUtil.getServerInfo(controller, stub).getServerName());
    } catch (IOException | RuntimeException e) {
      return new Probe(
          false, Outcome.UNPROVEN, "its endpoint accepts connections but did not answer: " + e);
    }
    if (answered.getStartCode() == server.startCode()
        && server.sameEndpoint(answered.getHostname(), answered.getPort())) {
      return new Probe(false, Outcome.ALIVE, "it answers at its endpoint as " + answered);
    }
    return new Probe(true, null, "its endpoint answers as another instance, " + answered);
  }
}
