package dev.hbase.cache.operator.hbase;

import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException;
import dev.hbase.cache.operator.hbase.JmxScraper.ScrapeException.Kind;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One GET of a RegionServer's info server, the one way both scrapers ({@link JmxScraper}, {@link
 * TlsJmxScraper}) talk to it: HTTP/1.1 over a socket of its own, bounded in time and in size. An
 * info server is the tenant's: whatever it does, a scrape ends.
 *
 * <ul>
 *   <li>the connect and each read wait at most the scraper's timeout;
 *   <li>the whole exchange (connect, TLS handshake, request, headers, body) ends at its deadline,
 *       {@value #DEADLINE_FACTOR} x the timeout: a server that trickles a byte just within each
 *       read timeout is cut off there. The deadline closes the TCP socket itself, which ends a read
 *       blocked in another thread at once (closing an {@code HttpURLConnection} waits for that
 *       read: up to a read timeout more, measured);
 *   <li>at most {@value #MAX_HEAD} bytes of status line and headers and {@value #MAX_BODY} of body
 *       are read (a RegionServer's answer is ~23 KiB); the body is handed to the reader as a
 *       stream, never held whole ({@link JmxBeans} keeps only the figures it needs).
 * </ul>
 */
final class InfoGet {
  /** At most this much of an answer's body is read: a RegionServer's bean is ~23 KiB. */
  static final int MAX_BODY = 4 << 20;

  /** At most this much of status line and headers. */
  static final int MAX_HEAD = 64 << 10;

  /** The whole exchange's deadline, in timeouts. */
  static final int DEADLINE_FACTOR = 2;

  /** Closes the sockets of exchanges past their deadline (a close returns at once). */
  private static final ScheduledExecutorService DEADLINES =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "jmx-deadline");
            t.setDaemon(true);
            return t;
          });

  private InfoGet() {}

  /** What a scraper puts over the TCP connection (TLS), and how its failures read. */
  interface Transport {
    /** The connection the request goes over (plain HTTP: {@code tcp} itself). */
    Socket over(Socket tcp, URI uri) throws IOException;

    /** A failure of {@link #over} (the handshake) as the scraper tells it. */
    ScrapeException handshakeFailed(URI uri, IOException e);

    Transport PLAIN =
        new Transport() {
          @Override
          public Socket over(Socket tcp, URI uri) {
            return tcp;
          }

          @Override
          public ScrapeException handshakeFailed(URI uri, IOException e) {
            return new ScrapeException(uri, "cannot connect: " + e, e);
          }
        };
  }

  /** Reads what it needs of a 200 answer's body (a stream of at most {@link #MAX_BODY}). */
  @FunctionalInterface
  interface Reader<T> {
    T read(InputStream body) throws IOException;
  }

  /** The answer was not 200: its status, for the scraper to tell (the body is not read). */
  static final class Status extends IOException {
    private static final long serialVersionUID = 1L;
    final int code;

    Status(int code) {
      super("HTTP " + code);
      this.code = code;
    }
  }

  /** The body went past {@link #MAX_BODY}. */
  static final class TooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    TooLarge() {
      super("answer larger than " + MAX_BODY + " bytes");
    }

    TooLarge(long declared) {
      super("answer of " + declared + " bytes declared, larger than the " + MAX_BODY + " read");
    }
  }

  /**
   * GET {@code uri} at {@code address} (an IP or a host name; the URI's host is sent as {@code
   * Host}), with the given extra headers, within the deadline; a 200's body goes to {@code reader}.
   *
   * @throws Status the answer was not 200 (its status; nothing else read)
   * @throws ScrapeException anything else: no connection, the handshake, the deadline, the size
   */
  static <T> T get(
      URI uri, Duration timeout, Transport transport, Map<String, String> headers, Reader<T> reader)
      throws Status, ScrapeException {
    int port = uri.getPort();
    Duration deadline = timeout.multipliedBy(DEADLINE_FACTOR);
    Socket tcp = new Socket(java.net.Proxy.NO_PROXY);
    AtomicBoolean expired = new AtomicBoolean();
    var cut =
        DEADLINES.schedule(
            () -> {
              expired.set(true);
              closeQuietly(tcp);
            },
            deadline.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      try {
        tcp.connect(new InetSocketAddress(host(uri), port), (int) timeout.toMillis());
        tcp.setSoTimeout((int) timeout.toMillis());
      } catch (SocketTimeoutException e) {
        throw stalled(uri, "no connection within " + timeout.toMillis() + " ms", e);
      } catch (IOException e) {
        throw expired.get() ? overDeadline(uri, deadline, e) : connectFailed(uri, e);
      }
      Socket s;
      try {
        s = transport.over(tcp, uri);
      } catch (IOException e) {
        throw expired.get()
            ? overDeadline(uri, deadline, e)
            : e instanceof SocketTimeoutException
                ? stalled(uri, "no handshake within " + timeout.toMillis() + " ms", e)
                : transport.handshakeFailed(uri, e);
      }
      try {
        return exchange(s, uri, headers, reader);
      } catch (Status | ScrapeException e) {
        throw e;
      } catch (TooLarge e) {
        throw new ScrapeException(uri, e.getMessage(), e, Kind.TOO_LARGE);
      } catch (IOException e) {
        if (expired.get()) {
          throw overDeadline(uri, deadline, e);
        }
        if (e instanceof SocketTimeoutException) {
          throw stalled(uri, "no answer within " + timeout.toMillis() + " ms", e);
        }
        throw new ScrapeException(uri, "answer cut off: " + e, e);
      }
    } finally {
      cut.cancel(false);
      closeQuietly(tcp);
    }
  }

  private static <T> T exchange(Socket s, URI uri, Map<String, String> headers, Reader<T> reader)
      throws IOException {
    StringBuilder req = new StringBuilder();
    req.append("GET ").append(uri.getRawPath());
    if (uri.getRawQuery() != null) {
      req.append('?').append(uri.getRawQuery());
    }
    req.append(" HTTP/1.1\r\nHost: ").append(uri.getRawAuthority()).append("\r\n");
    req.append("Accept: application/json\r\nConnection: close\r\n");
    headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
    req.append("\r\n");
    OutputStream out = s.getOutputStream();
    out.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.flush();

    InputStream in = new BufferedInputStream(s.getInputStream(), 8192);
    Head head = Head.read(in, uri);
    if (head.status != 200) {
      throw new Status(head.status);
    }
    InputStream body;
    if (head.chunked) {
      body = new Chunked(in);
    } else if (head.length >= 0) {
      if (head.length > MAX_BODY) {
        throw new TooLarge(head.length); // refused before a byte of it is read
      }
      body = new Limited(in, head.length, false);
    } else {
      body = in; // until the server closes
    }
    return reader.read(new Limited(body, MAX_BODY, true));
  }

  /** The status line and the headers that frame the body. */
  private record Head(int status, boolean chunked, long length) {
    static Head read(InputStream in, URI uri) throws IOException {
      int[] budget = {MAX_HEAD};
      String statusLine = line(in, budget);
      // "HTTP/1.1 200 OK"
      String[] parts = statusLine.split(" ", 3);
      if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
        throw new ScrapeException(uri, "not an HTTP answer: " + cut(statusLine), null);
      }
      int status;
      try {
        status = Integer.parseInt(parts[1]);
      } catch (NumberFormatException e) {
        throw new ScrapeException(uri, "not an HTTP status: " + cut(statusLine), null);
      }
      boolean chunked = false;
      long length = -1;
      for (String h = line(in, budget); !h.isEmpty(); h = line(in, budget)) {
        int colon = h.indexOf(':');
        if (colon <= 0) {
          continue;
        }
        String name = h.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = h.substring(colon + 1).trim();
        if (name.equals("transfer-encoding")) {
          chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
        } else if (name.equals("content-length")) {
          try {
            length = Long.parseLong(value);
          } catch (NumberFormatException e) {
            throw new ScrapeException(uri, "bad Content-Length: " + cut(value), null);
          }
        }
      }
      return new Head(status, chunked, length);
    }

    /** One CRLF (or LF) ended line, counted against the head's budget. */
    static String line(InputStream in, int[] budget) throws IOException {
      ByteArrayOutputStream b = new ByteArrayOutputStream(64);
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new EOFException("the answer ended in its headers");
        }
        if (--budget[0] < 0) {
          throw new TooLarge();
        }
        if (c != '\r') {
          b.write(c);
        }
      }
      return b.toString(StandardCharsets.ISO_8859_1);
    }

    static String cut(String s) {
      return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }
  }

  /** A body's stream: its one-byte read as its array read. */
  private abstract static class Body extends InputStream {
    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }
  }

  /** At most {@code limit} bytes: then EOF ({@code fail} false) or {@link TooLarge} (true). */
  private static final class Limited extends Body {
    private final InputStream in;
    private final boolean fail;
    private long left;

    Limited(InputStream in, long limit, boolean fail) {
      this.in = in;
      this.left = limit;
      this.fail = fail;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (left <= 0) {
        if (!fail) {
          return -1;
        }
        // one byte more than allowed: there is more, so the answer is too large
        if (in.read() < 0) {
          return -1;
        }
        throw new TooLarge();
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }
  }

  /** A chunked body (RFC 9112 7.1), its chunk extensions and trailers ignored. */
  private static final class Chunked extends Body {
    private final InputStream in;
    private long left; // of the current chunk
    private boolean done;
    private final int[] budget = {MAX_HEAD};

    Chunked(InputStream in) {
      this.in = in;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (done) {
        return -1;
      }
      if (left == 0) {
        String size = Head.line(in, budget);
        int semi = size.indexOf(';');
        try {
          left = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
        } catch (NumberFormatException e) {
          throw new IOException("bad chunk size: " + Head.cut(size));
        }
        if (left < 0) {
          throw new IOException("bad chunk size: " + Head.cut(size));
        }
        if (left == 0) {
          done = true;
          return -1;
        }
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n < 0) {
        throw new EOFException("the answer ended in a chunk");
      }
      left -= n;
      if (left == 0) {
        Head.line(in, budget); // the CRLF after the chunk
      }
      return n;
    }
  }

  static String host(URI uri) {
    String h = uri.getHost();
    return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
  }

  private static ScrapeException connectFailed(URI uri, IOException e) {
    return new ScrapeException(uri, "cannot connect: " + e, e);
  }

  private static ScrapeException stalled(URI uri, String why, IOException e) {
    return new ScrapeException(uri, why, e, Kind.STALLED);
  }

  private static ScrapeException overDeadline(URI uri, Duration deadline, IOException e) {
    return stalled(uri, "no whole answer within " + deadline.toMillis() + " ms", e);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closed already
    }
  }
}
