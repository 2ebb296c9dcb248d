package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.ipc.RpcClient;
import org.apache.hadoop.hbase.ipc.RpcClientFactory;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningRequest;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.MasterService;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.RequestHeader;

/**
 * A fake HMaster a tenant runs, on a socket that speaks HBase's wire format: one connection, whose
 * preamble ("HBas", version, auth), connection header and first call it reads; then it sends the
 * answer and waits for the client to close.
 */
final class FakeMaster implements AutoCloseable {
  /** What the master sends once it has read the client's first call. */
  interface Answer {
    void send(DataOutputStream out) throws IOException;
  }

  private final ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
  private final Thread thread;
  final AtomicLong sent = new AtomicLong();
  private volatile boolean closedByClient;
  private volatile Socket accepted;
  volatile int callId;

  FakeMaster(Answer answer) throws IOException {
    thread =
        new Thread(
            () -> {
              try (Socket s = server.accept()) {
                accepted = s;
                var in = new DataInputStream(s.getInputStream());
                in.readFully(new byte[6]);
                in.readFully(new byte[in.readInt()]); // the connection header
                byte[] call = new byte[in.readInt()];
                in.readFully(call);
                callId =
                    RequestHeader.parseDelimitedFrom(new java.io.ByteArrayInputStream(call))
                        .getCallId();
                OutputStream raw = s.getOutputStream();
                try {
                  answer.send(new DataOutputStream(raw));
                  while (in.read() >= 0) {
                    // the client closes the connection when it is done
                  }
                } catch (IOException closed) {
                  // the client closed mid-answer
                }
                closedByClient = true;
              } catch (IOException e) {
                // the server was closed
              }
            },
            "fake-master");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * One answer frame as HBase's server writes it: its length, then each message length-delimited
   * (the response header, then the response if any); flushed. The frame's size, length excluded.
   */
  static int send(
      DataOutputStream out, org.apache.hbase.thirdparty.com.google.protobuf.Message... parts)
      throws IOException {
    var frame = new java.io.ByteArrayOutputStream();
    for (var m : parts) {
      m.writeDelimitedTo(frame);
    }
    out.writeInt(frame.size());
    frame.writeTo(out);
    out.flush();
    return frame.size();
  }

  int port() {
    return server.getLocalPort();
  }

  void awaitClosed(Duration within) throws InterruptedException {
    thread.join(within.toMillis());
    assertThat(closedByClient).as("the client closed the connection").isTrue();
  }

  /** HBase's client, as the operator makes it, asks this master whether it runs. */
  IsMasterRunningResponse askIsMasterRunning(Duration timeout) throws Exception {
    Configuration conf =
        AdminHBaseCluster.configuration(
            Map.of("hbase.zookeeper.quorum", "localhost"), AdminHBaseCluster.Options.defaults());
    try (RpcClient client = RpcClientFactory.createClient(conf, "fake-cluster")) {
      var channel =
          client.createBlockingRpcChannel(
              ServerName.valueOf("127.0.0.1", port(), 1),
              User.getCurrent(),
              (int) timeout.toMillis());
      return MasterService.newBlockingStub(channel)
          .isMasterRunning(null, IsMasterRunningRequest.getDefaultInstance());
    }
  }

  /** Closes the listening socket, and the connection if one is open. */
  @Override
  public void close() throws IOException {
    server.close();
    Socket s = accepted;
    if (s != null) {
      s.close();
    }
  }
}
