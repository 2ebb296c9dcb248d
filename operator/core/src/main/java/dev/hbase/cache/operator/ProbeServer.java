package dev.hbase.cache.operator;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's probes ({@code /healthz}, {@code /readyz}) on a listener of their own, which no
 * other work shares and no client can hold: one thread serves every connection without blocking on
 * any (a selector), so a connection that sends a byte and stalls costs a buffer, never a thread.
 *
 * <ul>
 *   <li>a connection gets {@link #DEADLINE} from its accept to send its request and take the answer
 *       (the chart's probes time out after 3 s), then it is closed;
 *   <li>at most {@value #MAX_OPEN} connections are held; one more closes the oldest (a probe sends
 *       its request within a millisecond of its connect, so it is never the oldest for long);
 *   <li>a request's head may be {@value #MAX_HEAD} bytes; the answers are worked out from what the
 *       operator holds in memory, never by a call that could wait.
 * </ul>
 *
 * Proven with stalled sockets by {@code ProbeServerTest} and {@code
 * ObservabilityIT.aStuckScrapeDoesNotHoldTheHealthProbe}.
 */
public final class ProbeServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ProbeServer.class);

  /** From a connection's accept to its answer sent, at most. */
  public static final Duration DEADLINE = Duration.ofSeconds(1);

  /** Connections held open at once, at most. */
  public static final int MAX_OPEN = 64;

  /** A request's line and headers, at most. */
  static final int MAX_HEAD = 4096;

  /** A probe's answer: its status and a short text. */
  public record Answer(int status, String body) {}

  private final ServerSocketChannel listener;
  private final Selector selector;
  private final Map<String, Supplier<Answer>> routes;
  private final ArrayDeque<SelectionKey> byAge = new ArrayDeque<>();
  private final Thread thread;
  private volatile boolean closed;

  /** One connection: when it must be done, its request so far, then its answer. */
  private static final class Conn {
    final long deadline;
    final ByteBuffer in = ByteBuffer.allocate(MAX_HEAD);
    ByteBuffer out;

    Conn(long deadline) {
      this.deadline = deadline;
    }
  }

  /**
   * Serves {@code routes} (path to answer; any other path: 404) on {@code port} (0: any free one).
   */
  public ProbeServer(int port, Map<String, Supplier<Answer>> routes) throws IOException {
    this.routes = Map.copyOf(routes);
    this.selector = Selector.open();
    this.listener = ServerSocketChannel.open();
    listener.bind(new InetSocketAddress(port), 128);
    listener.configureBlocking(false);
    listener.register(selector, SelectionKey.OP_ACCEPT);
    this.thread = new Thread(this::loop, "probes");
    thread.setDaemon(true);
    thread.start();
  }

  /** The port it listens on. */
  public int port() {
    return listener.socket().getLocalPort();
  }

  private void loop() {
    while (!closed) {
      try {
        long now = System.nanoTime();
        long next = expire(now);
        selector.select(Math.max(1, (next - now) / 1_000_000));
        Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
        while (ready.hasNext()) {
          SelectionKey k = ready.next();
          ready.remove();
          try {
            if (!k.isValid()) {
              continue;
            }
            if (k.isAcceptable()) {
              accept();
            } else if (k.isReadable()) {
              read(k);
            } else if (k.isWritable()) {
              write(k);
            }
          } catch (IOException | RuntimeException e) {
            close(k);
          }
        }
      } catch (IOException | RuntimeException e) {
        if (!closed) {
          log.warn("probe listener: {}", e.toString());
        }
      }
    }
  }

  /** Closes the connections past their deadline; returns the nearest deadline left. */
  private long expire(long now) {
    long next = now + DEADLINE.toNanos();
    for (Iterator<SelectionKey> it = byAge.iterator(); it.hasNext(); ) {
      SelectionKey k = it.next();
      Conn c = (Conn) k.attachment();
      if (!k.isValid()) {
        it.remove();
      } else if (c.deadline - now <= 0) {
        it.remove();
        k.cancel();
        closeChannel(k);
      } else {
        next = Math.min(next, c.deadline); // accepted in order: the first left is the nearest
        break;
      }
    }
    return next;
  }

  private void accept() throws IOException {
    SocketChannel ch;
    while ((ch = listener.accept()) != null) {
      ch.configureBlocking(false);
      SelectionKey k =
          ch.register(
              selector, SelectionKey.OP_READ, new Conn(System.nanoTime() + DEADLINE.toNanos()));
      byAge.add(k);
      while (byAge.size() > MAX_OPEN) {
        SelectionKey oldest = byAge.poll(); // a stalled one: a probe sends at once
        oldest.cancel();
        closeChannel(oldest);
      }
    }
  }

  private void read(SelectionKey k) throws IOException {
    Conn c = (Conn) k.attachment();
    SocketChannel ch = (SocketChannel) k.channel();
    if (ch.read(c.in) < 0) {
      close(k);
      return;
    }
    String head = new String(c.in.array(), 0, c.in.position(), StandardCharsets.ISO_8859_1);
    int end = head.indexOf("\r\n\r\n");
    if (end < 0) {
      if (!c.in.hasRemaining()) {
        answer(k, c, new Answer(431, "request head too large"));
      }
      return;
    }
    String[] line = head.substring(0, head.indexOf("\r\n")).split(" ");
    Answer a;
    if (line.length < 3 || !line[2].startsWith("HTTP/")) {
      a = new Answer(400, "bad request");
    } else if (!line[0].equals("GET")) {
      a = new Answer(405, "GET only");
    } else {
      String path = line[1].contains("?") ? line[1].substring(0, line[1].indexOf('?')) : line[1];
      Supplier<Answer> route = routes.get(path);
      try {
        a = route == null ? new Answer(404, "not found") : route.get();
      } catch (RuntimeException e) {
        a = new Answer(503, String.valueOf(e));
      }
    }
    answer(k, c, a);
  }

  private void answer(SelectionKey k, Conn c, Answer a) throws IOException {
    byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 "
            + a.status()
            + (a.status() == 200 ? " OK" : " Error")
            + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    byte[] h = head.getBytes(StandardCharsets.ISO_8859_1);
    c.out = ByteBuffer.allocate(h.length + body.length).put(h).put(body).flip();
    k.interestOps(SelectionKey.OP_WRITE);
    write(k);
  }

  private void write(SelectionKey k) throws IOException {
    Conn c = (Conn) k.attachment();
    ((SocketChannel) k.channel()).write(c.out);
    if (!c.out.hasRemaining()) {
      close(k);
    }
  }

  private void close(SelectionKey k) {
    byAge.remove(k);
    k.cancel();
    closeChannel(k);
  }

  private static void closeChannel(SelectionKey k) {
    try {
      k.channel().close();
    } catch (IOException e) {
      // closed already
    }
  }

  @Override
  public void close() {
    closed = true;
    selector.wakeup();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (SelectionKey k : selector.keys()) {
      close(k);
    }
    try {
      selector.close();
      listener.close();
    } catch (IOException e) {
      // closed already
    }
  }
}
