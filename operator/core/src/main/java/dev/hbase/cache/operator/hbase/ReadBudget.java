package dev.hbase.cache.operator.hbase;

import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBufAllocator;
import org.apache.hbase.thirdparty.io.netty.buffer.UnpooledDirectByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.UnpooledHeapByteBuf;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.hbase.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;

/**
 * What the buffers of all the operator's HBase connections hold at once, with a limit: each
 * connection's buffers are capped ({@link CappedAllocator}, {@code HBASE_ANSWER_CAP_MIB}), but a
 * tenant's servers can each send the head of an answer just under that cap and then stall (or
 * trickle it), and the frame decoder keeps what came until the frame is whole. Before this class
 * those buffers were Netty's pooled direct memory, outside the heap and counted nowhere: ten
 * stalled heads of 15 MiB held 176 MiB of it (measured, HBase's client and fake masters) beside the
 * chart's 358 MiB heap in a 512 MiB pod, and a few more would have the pod killed, every tenant's
 * reconciles with it; with this class, under that heap, at most 52 MiB counted, 8 of 10 closed.
 *
 * <p>So the client's buffers are this class's: unpooled, in the heap (what a frame decoder gathers;
 * the one NIO read's copy is the JDK's, up to 64 KiB per event loop thread) or direct (only what
 * asks for direct), each allocation and each growth counted here before it is made. Past {@link
 * #limit()} the connection that has held bytes the longest without a break is closed, of those that
 * have held them a second at least, else the one that holds the most (its calls fail with a message
 * that says why, the next reconcile asks again): an answer read at network speed is gone in
 * milliseconds, a stalled one is the oldest, a burst of fresh ones the largest. Its bytes come back
 * when its event loop closes it, so meanwhile others may go a quarter past the limit (and no second
 * connection is closed for bytes already on their way back); past that, the allocation itself fails
 * and the connection that asked is closed. An answer is not slowed or refused while the total is
 * under the limit.
 *
 * <p>The limit is an eighth of the heap, twice the cap at least (45 MiB of the chart's 358 MiB
 * heap: the largest answer the operator asks for, a 24,000-region cluster's metrics, is some 3.4
 * MB).
 */
final class ReadBudget {
  private ReadBudget() {}

  private static final AtomicLong USED = new AtomicLong();
  private static final AtomicLong HIGH_WATER = new AtomicLong();
  private static final AtomicLong CLOSED = new AtomicLong();
  private static final AtomicLong RECOUNTED = new AtomicLong();

  /**
   * What the connections closed to keep under the limit still hold, to come back at their close.
   */
  private static final AtomicLong PENDING = new AtomicLong();

  private static volatile long limit = -1; // -1: an eighth of the heap, twice the cap at least

  /** The connections that hold bytes now, each with how many and since when. */
  private static final Set<Holding> HOLDERS = ConcurrentHashMap.newKeySet();

  /** The bytes limit. */
  static long limit() {
    long l = limit;
    return l > 0 ? l : Math.max(Runtime.getRuntime().maxMemory() / 8, 2L * RpcAnswerCap.limit());
  }

  /** For tests: a limit other than the default (0 or less: the default). */
  static void limit(long bytes) {
    limit = bytes;
  }

  /** The bytes held now, by every connection's buffers. */
  static long used() {
    return USED.get();
  }

  /** The most ever held at once. */
  static long highWater() {
    return HIGH_WATER.get();
  }

  /** For tests: the high water from now on. */
  static void resetHighWater() {
    HIGH_WATER.set(USED.get());
  }

  /** What {@link Recount} copied into counted buffers, in bytes. */
  static long recounted() {
    return RECOUNTED.get();
  }

  /** How many connections were closed to keep under the limit. */
  static long closed() {
    return CLOSED.get();
  }

  /** One connection's share: what its buffers hold, and since when without a break. */
  static final class Holding {
    private final NioSocketChannel channel;
    private final AtomicLong bytes = new AtomicLong();
    private volatile long since;
    private volatile boolean closing;
    private long pendingLeft; // of PENDING, under this

    Holding(NioSocketChannel channel) {
      this.channel = channel;
    }

    private synchronized void add(long n) {
      if (n < 0 && pendingLeft > 0) {
        long back = Math.min(-n, pendingLeft);
        pendingLeft -= back;
        PENDING.addAndGet(-back);
      }
      long before = bytes.getAndAdd(n);
      if (before <= 0 && before + n > 0) {
        since = System.nanoTime();
        if (!closing) {
          HOLDERS.add(this);
        }
      } else if (before + n <= 0) {
        HOLDERS.remove(this);
      }
    }

    /** The channel is closed: it is no longer one to close. */
    synchronized void closed() {
      closing = true;
      HOLDERS.remove(this);
    }

    private SocketAddress remote() {
      return channel.remoteAddress();
    }

    private void close(long used) {
      synchronized (this) {
        if (closing) {
          return; // another thread past the limit chose it too: closed once, counted once
        }
        closing = true;
        HOLDERS.remove(this);
        pendingLeft = bytes.get();
        PENDING.addAndGet(pendingLeft);
      }
      CLOSED.incrementAndGet();
      IllegalStateException why =
          new IllegalStateException(
              "the connection to "
                  + remote()
                  + " held "
                  + (bytes.get() >> 10)
                  + " KiB of an answer not yet read whole, the longest (or the most) of the"
                  + " operator's HBase connections, while their buffers held "
                  + (used >> 20)
                  + " MiB in all (at most "
                  + (limit() >> 20)
                  + " MiB, an eighth of the heap); it is closed so that the others' answers can be"
                  + " read, the next reconcile asks again");
      channel
          .eventLoop()
          .execute(
              () -> {
                channel.pipeline().fireExceptionCaught(why); // HBase fails its calls with it
                channel.close();
              });
    }
  }

  /** Counts {@code n} more bytes of {@code h} (null: {@code h} is being made, see its caller). */
  private static void take(Holding h, long n, Holding asker) {
    long now = USED.addAndGet(n);
    long l = limit();
    // one more connection is closed only while what is not already on its way back is over
    if (now - PENDING.get() > l) {
      Holding victim = victim(System.nanoTime());
      if (victim != null) {
        victim.close(now);
      }
    }
    if (now > l + l / 4) {
      USED.addAndGet(-n);
      throw new IllegalStateException(
          "the operator's HBase connections' buffers hold "
              + (now >> 20)
              + " MiB, past their limit ("
              + (l >> 20)
              + " MiB, an eighth of the heap), while "
              + (asker == null ? "a connection" : "the connection to " + asker.remote())
              + " asked for "
              + (n >> 10)
              + " KiB more; the connection is closed, the next reconcile asks again");
    }
    HIGH_WATER.accumulateAndGet(now, Math::max);
    if (h != null) {
      h.add(n);
    }
  }

  /** How long a connection holds bytes before it can be the one closed for being the oldest. */
  static final long SETTLED_NANOS = 1_000_000_000L;

  /**
   * The connection to close: the one that has held bytes the longest, of those that have held them
   * a second at least (an answer read at network speed holds its bytes for milliseconds); if none
   * has, the one that holds the most (heads sent in a burst on fresh connections while an honest
   * answer is read: the burst's connections are closed, not the answer's).
   */
  private static Holding victim(long nanoNow) {
    Holding oldest = null;
    Holding largest = null;
    for (Holding c : HOLDERS) {
      long b = c.bytes.get();
      if (c.closing || b <= 0) {
        continue;
      }
      if (nanoNow - c.since >= SETTLED_NANOS && (oldest == null || c.since < oldest.since)) {
        oldest = c;
      }
      if (largest == null || b > largest.bytes.get()) {
        largest = c;
      }
    }
    return oldest != null ? oldest : largest;
  }

  private static void give(Holding h, long n) {
    USED.addAndGet(-n);
    if (h != null) {
      h.add(-n);
    }
  }

  /**
   * Before HBase's SASL unwrap (a connection with {@code hbase.rpc.protection} integrity or
   * privacy): the unwrap copies each frame into a byte array and unwraps it into another, neither
   * made by the connection's allocator, so twice the frame is counted while it runs.
   */
  static final class Reserve extends ChannelInboundHandlerAdapter {
    private final Holding holding;

    Reserve(Holding holding) {
      this.holding = holding;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (!(msg instanceof ByteBuf frame)) {
        ctx.fireChannelRead(msg);
        return;
      }
      long n = 2L * frame.readableBytes();
      try {
        take(holding, n, holding);
      } catch (IllegalStateException e) {
        frame.release();
        ctx.fireExceptionCaught(e);
        return;
      }
      try {
        ctx.fireChannelRead(frame);
      } finally {
        give(holding, n);
      }
    }
  }

  /**
   * After HBase's SASL unwrap: what it passes on ({@code Unpooled.wrappedBuffer} of the unwrapped
   * bytes) is copied into a buffer of the connection's allocator, so that the RPC frame decoder
   * after it, which keeps the first buffer it is given as its own while a frame is incomplete,
   * holds counted bytes.
   */
  static final class Recount extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof ByteBuf b && !(b.alloc() instanceof CappedAllocator)) {
        ByteBuf copy;
        try {
          copy = ctx.alloc().heapBuffer(b.readableBytes());
        } catch (RuntimeException e) {
          b.release();
          ctx.fireExceptionCaught(e);
          return;
        }
        RECOUNTED.addAndGet(b.readableBytes());
        copy.writeBytes(b);
        b.release();
        msg = copy;
      }
      ctx.fireChannelRead(msg);
    }
  }

  /** A heap buffer whose arrays are counted. */
  static final class Heap extends UnpooledHeapByteBuf {
    private Holding holding; // null only inside super's constructor

    Heap(ByteBufAllocator alloc, int initial, int max, Holding holding) {
      super(alloc, initial, max); // its first array is counted without a holding
      this.holding = holding;
      holding.add(capacity());
    }

    @Override
    protected byte[] allocateArray(int n) {
      take(holding, n, holding);
      try {
        return super.allocateArray(n);
      } catch (RuntimeException | Error e) {
        give(holding, n);
        throw e;
      }
    }

    @Override
    protected void freeArray(byte[] array) {
      super.freeArray(array);
      give(holding, array.length);
    }
  }

  /** A direct buffer whose memory is counted. */
  static final class Direct extends UnpooledDirectByteBuf {
    private Holding holding; // null only inside super's constructor

    Direct(ByteBufAllocator alloc, int initial, int max, Holding holding) {
      super(alloc, initial, max);
      this.holding = holding;
      holding.add(capacity());
    }

    @Override
    protected ByteBuffer allocateDirect(int n) {
      take(holding, n, holding);
      try {
        return super.allocateDirect(n);
      } catch (RuntimeException | Error e) {
        give(holding, n);
        throw e;
      }
    }

    @Override
    protected void freeDirect(ByteBuffer buffer) {
      int n = buffer.capacity();
      super.freeDirect(buffer);
      give(holding, n);
    }
  }
}
