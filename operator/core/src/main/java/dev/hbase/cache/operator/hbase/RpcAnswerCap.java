package dev.hbase.cache.operator.hbase;

import java.net.SocketAddress;
import java.util.function.Supplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ipc.NettyRpcClient;
import org.apache.hadoop.hbase.ipc.NettyRpcClientConfigHelper;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBufAllocator;
import org.apache.hbase.thirdparty.io.netty.buffer.CompositeByteBuf;
import org.apache.hbase.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.hbase.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.hbase.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;
import org.apache.hbase.thirdparty.io.netty.util.concurrent.DefaultThreadFactory;

/**
 * A size cap on every answer the operator's HBase client reads: an HMaster or RegionServer the
 * operator reaches is named by a tenant (the ZooKeeper quorum of their policy), and HBase 2.6.4's
 * client frames answers with {@code LengthFieldBasedFrameDecoder(Integer.MAX_VALUE, 0, 4)} (in
 * {@code NettyRpcConnection}; the SASL wrap layer likewise), with no setting to lower it. A fake
 * master could then have the operator buffer up to 2 GiB of direct memory per connection: the other
 * tenants' calls would fail while it is held, or the operator would run out of memory.
 *
 * <p>How: every connection of the client is made on {@link Channel}, whose buffer allocator refuses
 * any buffer, or any growth of one, beyond {@link #limit()}. A frame decoder accumulates a frame in
 * one buffer, so the frame being read is what hits the cap, wherever in the pipeline the decoder is
 * (the RPC frames, the SASL wrap frames, TLS records). The decoder's failure reaches HBase's {@code
 * NettyRpcDuplexHandler}, which fails the connection's calls with it and closes the connection: the
 * reconcile's call fails at once, with this class's message, instead of at its deadline after
 * reading what the server chose to send.
 *
 * <p>The cap is the operator's setting {@code HBASE_ANSWER_CAP_MIB} (default 16 MiB: the largest
 * answer the operator asks for is the master's cluster metrics, about 300 bytes per region, so 16
 * MiB holds some 50,000 regions). A larger cluster needs a larger cap and a larger operator heap,
 * as the answer is also parsed into it. (The 300 bytes are an estimate, not a measurement.)
 */
public final class RpcAnswerCap {
  /** The default cap, in MiB. */
  public static final int DEFAULT_MIB = 16;

  private static volatile int limit = DEFAULT_MIB << 20;

  /**
   * One event loop group for every connection of the process, as HBase's default ({@code
   * DefaultNettyEventLoopConfig}) is: daemon threads, Netty's default count (twice the cores).
   */
  private static final EventLoopGroup GROUP =
      new NioEventLoopGroup(0, new DefaultThreadFactory("hbase-rpc-client", true));

  private RpcAnswerCap() {}

  /** The cap in bytes. */
  public static int limit() {
    return limit;
  }

  /** Sets the cap (the operator's start, from {@code HBASE_ANSWER_CAP_MIB}); 1 to 1024 MiB. */
  public static void limitMib(int mib) {
    if (mib < 1 || mib > 1024) {
      throw new IllegalArgumentException(
          "HBASE_ANSWER_CAP_MIB must be between 1 and 1024, not " + mib);
    }
    limit = mib << 20;
  }

  /** Parses the setting; unset or blank is the default. */
  public static int parseMib(String value) {
    if (value == null || value.isBlank()) {
      return DEFAULT_MIB;
    }
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "HBASE_ANSWER_CAP_MIB must be a whole number of MiB, not '" + value + "'", e);
    }
  }

  /**
   * Has the client made from {@code conf} use Netty on {@link Channel}. HBase keeps the group and
   * channel class in a static map under a fixed name, so every configuration that went through here
   * shares them.
   */
  static void install(Configuration conf) {
    conf.set("hbase.rpc.client.impl", NettyRpcClient.class.getName());
    NettyRpcClientConfigHelper.setEventLoopConfig(conf, GROUP, Channel.class);
  }

  /** The client's socket channel: Netty's NIO channel with a capped allocator. */
  public static final class Channel extends NioSocketChannel {
    public Channel() {
      super();
      config().setAllocator(new Allocator(config().getAllocator(), this));
    }
  }

  /** The cap's error: names the server and the setting. */
  static IllegalStateException tooLarge(int asked, SocketAddress from) {
    return new IllegalStateException(
        "an answer from "
            + from
            + " needs more than the operator's cap on HBase answers ("
            + asked
            + " bytes asked, cap "
            + (limit >> 20)
            + " MiB, HBASE_ANSWER_CAP_MIB); the connection is closed");
  }

  /**
   * Netty's allocator, with no buffer made larger than the cap and none able to grow past it. The
   * composite buffers are not capped: no frame decoder on the client's read path accumulates into
   * one.
   */
  static final class Allocator implements ByteBufAllocator {
    private final ByteBufAllocator delegate;
    private final Supplier<SocketAddress> remote;

    Allocator(ByteBufAllocator delegate, NioSocketChannel channel) {
      this.delegate = delegate;
      this.remote = channel::remoteAddress;
    }

    private int max(int initial, int max) {
      int cap = limit;
      if (initial > cap) {
        throw tooLarge(initial, remote.get());
      }
      return Math.min(max, cap);
    }

    @Override
    public ByteBuf buffer() {
      return delegate.buffer(Math.min(256, limit), limit);
    }

    @Override
    public ByteBuf buffer(int initial) {
      return delegate.buffer(initial, max(initial, Integer.MAX_VALUE));
    }

    @Override
    public ByteBuf buffer(int initial, int max) {
      return delegate.buffer(initial, max(initial, max));
    }

    @Override
    public ByteBuf ioBuffer() {
      return delegate.ioBuffer(Math.min(256, limit), limit);
    }

    @Override
    public ByteBuf ioBuffer(int initial) {
      return delegate.ioBuffer(initial, max(initial, Integer.MAX_VALUE));
    }

    @Override
    public ByteBuf ioBuffer(int initial, int max) {
      return delegate.ioBuffer(initial, max(initial, max));
    }

    @Override
    public ByteBuf heapBuffer() {
      return delegate.heapBuffer(Math.min(256, limit), limit);
    }

    @Override
    public ByteBuf heapBuffer(int initial) {
      return delegate.heapBuffer(initial, max(initial, Integer.MAX_VALUE));
    }

    @Override
    public ByteBuf heapBuffer(int initial, int max) {
      return delegate.heapBuffer(initial, max(initial, max));
    }

    @Override
    public ByteBuf directBuffer() {
      return delegate.directBuffer(Math.min(256, limit), limit);
    }

    @Override
    public ByteBuf directBuffer(int initial) {
      return delegate.directBuffer(initial, max(initial, Integer.MAX_VALUE));
    }

    @Override
    public ByteBuf directBuffer(int initial, int max) {
      return delegate.directBuffer(initial, max(initial, max));
    }

    @Override
    public CompositeByteBuf compositeBuffer() {
      return delegate.compositeBuffer();
    }

    @Override
    public CompositeByteBuf compositeBuffer(int components) {
      return delegate.compositeBuffer(components);
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer() {
      return delegate.compositeHeapBuffer();
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int components) {
      return delegate.compositeHeapBuffer(components);
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer() {
      return delegate.compositeDirectBuffer();
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int components) {
      return delegate.compositeDirectBuffer(components);
    }

    @Override
    public boolean isDirectBufferPooled() {
      return delegate.isDirectBufferPooled();
    }

    @Override
    public int calculateNewCapacity(int minNewCapacity, int maxCapacity) {
      return delegate.calculateNewCapacity(minNewCapacity, maxCapacity);
    }
  }
}
