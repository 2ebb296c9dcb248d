package dev.hbase.cache.operator.hbase;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A RegionServer info port on loopback, a real socket server, that answers /jmx the way a test
 * needs: HBase 2.6.4's answer ({@link #healthy}), the headers of a large body and then one byte
 * every so often ({@link #trickling}), or a body as fast as the socket takes it ({@link
 * #flooding}). It counts the connections it holds open and the body bytes it has written.
 */
public final class InfoPortServer implements AutoCloseable {
  /** What a connection is answered with, after its request's head. */
  @FunctionalInterface
  interface Answer {
    void write(OutputStream out, Socket s) throws IOException, InterruptedException;
  }

  private final ServerSocket server;
  private final Answer answer;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();

  /** Requests whose head arrived. */
  public final AtomicInteger requests = new AtomicInteger();

  /** The most connections it held open at once. */
  public final AtomicInteger mostOpen = new AtomicInteger();

  /** Body bytes written, over all connections. */
  public final AtomicLong bodyBytes = new AtomicLong();

  private InfoPortServer(Answer answer) throws IOException {
    this(new ServerSocket(0, 128, InetAddress.getLoopbackAddress()), answer);
  }

  private InfoPortServer(ServerSocket server, Answer answer) {
    this.server = server;
    this.answer = answer;
    Thread accept = new Thread(this::accept, "info-port-" + server.getLocalPort());
    accept.setDaemon(true);
    accept.start();
  }

  /** HBase 2.6.4's /jmx answer of a RegionServer with a PersistentFile cache, chunked. */
  public static InfoPortServer healthy() throws IOException {
    byte[] jmx;
    try (InputStream in =
        JmxScraper.class.getResourceAsStream("jmx-regionserver-2.6.4-persistentfile.json")) {
      jmx = in.readAllBytes();
    }
    return healthy(jmx);
  }

  /** {@code body}, in chunks of 4 KiB (as Jetty sends it, without a Content-Length). */
  public static InfoPortServer healthy(byte[] body) throws IOException {
    InfoPortServer[] self = new InfoPortServer[1];
    self[0] =
        new InfoPortServer(
            (out, socket) -> {
              head(out, "Transfer-Encoding: chunked");
              for (int i = 0; i < body.length; i += 4096) {
                int n = Math.min(4096, body.length - i);
                out.write((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(body, i, n);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                self[0].bodyBytes.addAndGet(n);
              }
              out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
              out.flush();
            });
    return self[0];
  }

  /**
   * The headers of a body of {@code length} bytes (null: none declared, the body ends when the
   * server closes), then one byte every {@code gap}, forever.
   */
  public static InfoPortServer trickling(Long length, Duration gap) throws IOException {
    return trickling(length, gap, new ServerSocket(0, 128, InetAddress.getLoopbackAddress()));
  }

  /** {@link #trickling} over TLS, with the key of {@code tls}. */
  public static InfoPortServer trickling(Long length, Duration gap, javax.net.ssl.SSLContext tls)
      throws IOException {
    return trickling(
        length,
        gap,
        tls.getServerSocketFactory().createServerSocket(0, 128, InetAddress.getLoopbackAddress()));
  }

  private static InfoPortServer trickling(Long length, Duration gap, ServerSocket listener) {
    InfoPortServer[] self = new InfoPortServer[1];
    self[0] =
        new InfoPortServer(
            listener,
            (out, socket) -> {
              head(out, length == null ? "Connection: close" : "Content-Length: " + length);
              out.write('{');
              out.flush();
              socket.setSoTimeout((int) gap.toMillis());
              while (true) {
                // wait out the gap reading: a client that hangs up is seen at once (its
                // connection no longer counted open)
                try {
                  if (socket.getInputStream().read() < 0) {
                    return;
                  }
                } catch (java.net.SocketTimeoutException e) {
                  // the gap is over
                }
                out.write(' ');
                out.flush();
                self[0].bodyBytes.incrementAndGet();
              }
            });
    return self[0];
  }

  /**
   * A body as fast as the socket takes it, valid JSON for as long as it goes ({@code
   * {"beans":[{},{},...}): {@code length} declared, or none (the body ends when the server closes).
   */
  public static InfoPortServer flooding(Long length) throws IOException {
    InfoPortServer[] self = new InfoPortServer[1];
    self[0] =
        new InfoPortServer(
            (out, socket) -> {
              head(out, length == null ? "Connection: close" : "Content-Length: " + length);
              out.write("{\"beans\":[".getBytes(StandardCharsets.US_ASCII));
              byte[] block = new byte[64 << 10];
              for (int i = 0; i < block.length; i += 3) {
                block[i] = '{';
                if (i + 1 < block.length) {
                  block[i + 1] = '}';
                }
                if (i + 2 < block.length) {
                  block[i + 2] = ',';
                }
              }
              block = Arrays.copyOf(block, block.length - block.length % 3);
              while (true) {
                out.write(block);
                self[0].bodyBytes.addAndGet(block.length);
              }
            });
    return self[0];
  }

  private static void head(OutputStream out, String header) throws IOException {
    out.write(
        ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + header + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
  }

  public int port() {
    return server.getLocalPort();
  }

  /** Connections open now. */
  public int open() {
    return open.size();
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      open.add(s);
      mostOpen.accumulateAndGet(open.size(), Math::max);
      Thread t =
          new Thread(
              () -> {
                try (s) {
                  readHead(s.getInputStream());
                  requests.incrementAndGet();
                  answer.write(s.getOutputStream(), s);
                } catch (IOException | InterruptedException e) {
                  // the client went away, or the server closed
                } finally {
                  open.remove(s);
                }
              },
              "info-port-" + server.getLocalPort() + "-conn");
      t.setDaemon(true);
      t.start();
    }
  }

  /** Up to the blank line that ends a request's head. */
  private static void readHead(InputStream in) throws IOException {
    int state = 0; // bytes of "\r\n\r\n" seen
    byte[] end = {'\r', '\n', '\r', '\n'};
    while (state < 4) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("the request ended in its head");
      }
      state = c == end[state] ? state + 1 : c == '\r' ? 1 : 0;
    }
  }

  @Override
  public void close() {
    try {
      server.close();
    } catch (IOException e) {
      // closed
    }
    for (Socket s : open) {
      try {
        s.close();
      } catch (IOException e) {
        // closed
      }
    }
  }
}
