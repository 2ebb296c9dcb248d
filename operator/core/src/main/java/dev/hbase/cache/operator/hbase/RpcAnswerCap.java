package dev.hbase.cache.operator.hbase;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.SocketAddress;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ipc.NettyRpcClient;
import org.apache.hadoop.hbase.ipc.NettyRpcClientConfigHelper;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.Descriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Message;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelHandler;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelOutboundHandlerAdapter;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelPipeline;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelPromise;
import org.apache.hbase.thirdparty.io.netty.channel.EventLoopGroup;
import org.apache.hbase.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.hbase.thirdparty.io.netty.channel.socket.nio.NioSocketChannel;
import org.apache.hbase.thirdparty.io.netty.util.ReferenceCountUtil;
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
 * any buffer, or any growth of one, beyond {@link #limit()}, and counts each in a limit on what all
 * connections hold at once ({@link ReadBudget}). A frame decoder accumulates a frame in one buffer,
 * so the frame being read is what hits the cap, wherever in the pipeline the decoder is (the RPC
 * frames, the SASL wrap frames, TLS records). The decoder's failure reaches HBase's {@code
 * NettyRpcDuplexHandler}, which fails the connection's calls with it and closes the connection: the
 * reconcile's call fails at once, with this class's message, instead of at its deadline after
 * reading what the server chose to send.
 *
 * <p>Bytes are not all: protobuf's objects can be a hundred times an answer's wire size ({@link
 * AnswerWeight}). So each answer frame is also weighed before HBase parses it ({@link Weigher}),
 * against the schema of the response its call expects ({@link CallTap} notes each call as it is
 * sent), and one whose parse could take more than a sixteenth of the heap is refused the same way;
 * so is a frame HBase's client would not read safely (a cell block, which it allocates by the
 * length the server gives: the client asks for none).
 *
 * <p>What an answer names must not stay in the heap either: an exception class name the client
 * could not load is replaced before HBase looks it up ({@link ExceptionNames}; in SASL errors,
 * {@link SaslErrors}), and HBase's static table-name cache is bounded ({@link TableNameCache}). The
 * one answer HBase reads with a frame decoder of its own, a Kerberos preamble call's, gets a
 * weigher of its own. A connection whose setup is done with no weigher in its pipeline is closed at
 * its first read ({@link Channel#doReadBytes}), so an HBase client that adds its parser another way
 * fails closed.
 *
 * <p>The cap is the operator's setting {@code HBASE_ANSWER_CAP_MIB} (default 16 MiB). The weight
 * limit is a sixteenth of the heap. The largest answer the operator asks for is the master's
 * cluster metrics: a region's load report is ~140 bytes on the wire, ~480 bytes of heap once parsed
 * and about 940 by {@link AnswerWeight}'s estimate (measured on 50,000 of them built with HBase
 * 2.6.4's classes), so the chart's 358 MiB heap takes clusters of some 24,000 regions. A larger
 * cluster needs a larger operator heap.
 */
public final class RpcAnswerCap {
  /** The default cap, in MiB. */
  public static final int DEFAULT_MIB = 16;

  private static volatile int limit = DEFAULT_MIB << 20;

  /**
   * One event loop group for every connection of the process, as HBase's default ({@code
   * DefaultNettyEventLoopConfig}) is: daemon threads, Netty's default count (twice the cores). Not
   * one thread: the client resolves a server's name on its loop when it connects, and the names are
   * the master's answer (a tenant's), so one slow name would hold every connection.
   */
  private static final EventLoopGroup GROUP =
      new NioEventLoopGroup(0, new DefaultThreadFactory("hbase-rpc-client", true));

  private RpcAnswerCap() {}

  /** The cap in bytes. */
  public static int limit() {
    return limit;
  }

  /** What the buffers of every HBase connection hold now ({@link ReadBudget}), in bytes. */
  public static long bufferBytes() {
    return ReadBudget.used();
  }

  /** The limit on {@link #bufferBytes()}. */
  public static long bufferLimit() {
    return ReadBudget.limit();
  }

  /** The connections closed to keep {@link #bufferBytes()} under its limit. */
  public static long connectionsClosedForBuffers() {
    return ReadBudget.closed();
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
    // no cell blocks: servers answer in protobuf alone, which the weigher reads; a cell block is
    // allocated by the length its header gives and decoded cell by cell from lengths inside it
    conf.set("hbase.client.rpc.codec", "");
    conf.set("hbase.client.default.rpc.codec", "");
    // its connection-header answer is read with no frame decoder and a length the server gives
    conf.setBoolean("hbase.rpc.crypto.encryption.aes.enabled", false);
    NettyRpcClientConfigHelper.setEventLoopConfig(conf, GROUP, Channel.class);
    ExceptionNames.count(); // read here, on the caller's thread, not at an answer on the event loop
  }

  /** HBase's handler that parses each answer frame (package-private in HBase 2.6.4). */
  static final String PARSER = "org.apache.hadoop.hbase.ipc.NettyRpcDuplexHandler";

  /** HBase's handler of a preamble call's one answer ({@code PreambleCallHandler.setup}). */
  static final String PREAMBLE = "org.apache.hadoop.hbase.ipc.PreambleCallHandler";

  /** HBase's SASL unwrap, on a connection with integrity or privacy. */
  static final String SASL_UNWRAP = "org.apache.hadoop.hbase.security.SaslUnwrapHandler";

  /** HBase's decoder of SASL challenges and errors. */
  static final String SASL_DECODER = "org.apache.hadoop.hbase.security.SaslChallengeDecoder";

  /** The name of HBase's handler that holds calls until the connection is set up. */
  static final String BUFFER_CALL = "BufferCall";

  /**
   * HBase's call ({@code org.apache.hadoop.hbase.ipc.Call}, package-private): its id and the
   * response type it expects, read by {@link CallTap} as the connection writes it.
   */
  private static final Class<?> CALL;

  private static final java.lang.reflect.Field CALL_ID;
  private static final java.lang.reflect.Field CALL_RESPONSE;
  private static final java.lang.reflect.Field PREAMBLE_CALL;

  static {
    try {
      CALL = Class.forName("org.apache.hadoop.hbase.ipc.Call");
      CALL_ID = CALL.getDeclaredField("id");
      CALL_RESPONSE = CALL.getDeclaredField("responseDefaultType");
      CALL_ID.setAccessible(true);
      CALL_RESPONSE.setAccessible(true);
      PREAMBLE_CALL = Class.forName(PREAMBLE).getDeclaredField("preambleCall");
      PREAMBLE_CALL.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /**
   * The client's socket channel: Netty's NIO channel with a capped allocator, and a pipeline that
   * puts a {@link Weigher} before HBase's parser and a {@link CallTap} after it when HBase adds the
   * parser ({@code NettyRpcConnection.established}, through {@code channel.pipeline().addBefore}).
   */
  public static final class Channel extends NioSocketChannel {
    private final ChannelPipeline watched;
    private final CappedAllocator allocator;
    private boolean setUp; // the connection's setup seen done, on its event loop

    public Channel() {
      super();
      allocator = new CappedAllocator(this);
      config().setAllocator(allocator);
      ChannelPipeline real = super.pipeline();
      Map<Integer, Descriptor> calls = callsSent();
      watched =
          (ChannelPipeline)
              Proxy.newProxyInstance(
                  ChannelPipeline.class.getClassLoader(),
                  new Class<?>[] {ChannelPipeline.class},
                  (proxy, method, args) -> {
                    String added =
                        method.getName().equals("addBefore")
                                && args != null
                                && args.length == 3
                                && args[2] != null
                            ? args[2].getClass().getName()
                            : "";
                    if (added.equals(PARSER)) {
                      real.addBefore((String) args[0], null, new Weigher(calls::remove, false));
                    } else if (added.equals(PREAMBLE)) {
                      // a preamble call's answer (a Kerberos client's server principal) is read
                      // by its own frame decoder and handler, once
                      Descriptor type = preambleType(args[2]);
                      real.addBefore((String) args[0], null, new Weigher(id -> type, true));
                    }
                    try {
                      Object r = method.invoke(real, args);
                      if (added.equals(PARSER)) {
                        real.addBefore((String) args[0], null, new CallTap(calls));
                      } else if (added.equals(SASL_DECODER)) {
                        real.addBefore((String) args[0], null, new SaslErrors());
                      }
                      return r == real ? proxy : r;
                    } catch (InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
    }

    /**
     * Every read of an established connection goes through a {@link Weigher}: a connection whose
     * setup is done ({@code BufferCallBeforeInitHandler} gone) with none in its pipeline (HBase
     * added its parser in a way this class does not see) is closed at its first read, not read
     * unweighed.
     */
    @Override
    protected int doReadBytes(ByteBuf buf) throws Exception {
      ChannelPipeline p = super.pipeline();
      if (!setUp && p.get(BUFFER_CALL) == null) {
        setUp = true;
        guardSaslUnwrap(p, allocator.holding());
      }
      if (p.get(BUFFER_CALL) == null && p.get(Weigher.class) == null) {
        throw new java.io.IOException(
            "the connection to "
                + remoteAddress()
                + " is set up with no weigher before HBase's parser (an HBase client this"
                + " operator does not know); closed unread");
      }
      return super.doReadBytes(buf);
    }

    /** A closed connection is no longer one the {@link ReadBudget} would close. */
    @Override
    protected void doClose() throws Exception {
      allocator.holding().closed();
      super.doClose();
    }

    @Override
    public ChannelPipeline pipeline() {
      return watched != null ? watched : super.pipeline(); // null only inside Netty's constructor
    }
  }

  /** The most calls a connection keeps the response types of while it waits for their answers. */
  static final int MAX_CALLS_AWAITED = 256;

  /**
   * The calls a connection sent and has no answer to yet, by id: an answer takes its call out. A
   * call HBase's client gave up on (its RPC timeout; a tenant's server that never answers) would
   * stay for the connection's life, one more each reconcile: past {@link #MAX_CALLS_AWAITED} the
   * oldest is dropped, and an answer to it, were one to come, is refused as an answer to no call.
   * The operator makes its calls one at a time per connection, so a handful are ever awaited.
   */
  static Map<Integer, Descriptor> callsSent() {
    return java.util.Collections.synchronizedMap(
        new java.util.LinkedHashMap<>() {
          @Override
          protected boolean removeEldestEntry(Map.Entry<Integer, Descriptor> eldest) {
            return size() > MAX_CALLS_AWAITED;
          }
        });
  }

  /**
   * Counts what HBase's SASL unwrap makes ({@link ReadBudget.Reserve} before it, {@link
   * ReadBudget.Recount} after it), once per connection, at its first read after its setup: HBase
   * 2.6.4 adds the unwrap (integrity or privacy) through the SASL handler's own context ({@code
   * ctx.pipeline()}, the pipeline itself, not {@link Channel#pipeline()}), so it is looked for
   * there, once the SASL handshake and the connection's setup are done. Idempotent.
   */
  static void guardSaslUnwrap(ChannelPipeline p, ReadBudget.Holding holding) {
    if (p.get(ReadBudget.Recount.class) != null) {
      return;
    }
    for (Map.Entry<String, ChannelHandler> e : p) {
      if (e.getValue().getClass().getName().equals(SASL_UNWRAP)) {
        p.addBefore(e.getKey(), null, new ReadBudget.Reserve(holding));
        p.addAfter(e.getKey(), null, new ReadBudget.Recount());
        return;
      }
    }
  }

  /** What HBase's SASL unwrap made that was copied into counted buffers, in bytes, so far. */
  public static long saslRecountedBytes() {
    return ReadBudget.recounted();
  }

  /** The response type of a preamble handler's call. */
  private static Descriptor preambleType(Object handler) throws IllegalAccessException {
    Object type = CALL_RESPONSE.get(PREAMBLE_CALL.get(handler));
    if (type instanceof Message m) {
      return m.getDescriptorForType();
    }
    throw new IllegalStateException("a preamble call with no response type: " + type);
  }

  /** Records each call the connection sends: its id and the response type it expects. */
  static final class CallTap extends ChannelOutboundHandlerAdapter {
    private final Map<Integer, Descriptor> calls;

    CallTap(Map<Integer, Descriptor> calls) {
      this.calls = calls;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
        throws Exception {
      if (CALL.isInstance(msg)) {
        Object type = CALL_RESPONSE.get(msg);
        if (type instanceof Message m) {
          calls.put(CALL_ID.getInt(msg), m.getDescriptorForType());
        }
      }
      ctx.write(msg, promise);
    }
  }

  /**
   * Refuses an answer frame whose parse could take more heap than {@link #weightLimit()}, or that
   * HBase's client would not read safely ({@link AnswerWeight}), before HBase parses it: the
   * failure goes to HBase's parser, which fails the connection's calls with it and closes the
   * connection; nothing the connection reads after it is passed on.
   */
  static final class Weigher extends ChannelInboundHandlerAdapter {
    private final IntFunction<Descriptor> calls;
    private final boolean once;
    private boolean refused;

    /**
     * @param calls the response type of a call id (and its release), null for a call not made
     * @param once weighs one frame, then leaves the pipeline (a preamble call's answer)
     */
    Weigher(IntFunction<Descriptor> calls, boolean once) {
      this.calls = calls;
      this.once = once;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (refused) {
        ReferenceCountUtil.release(msg);
        return;
      }
      if (msg instanceof ByteBuf frame) {
        long weight = AnswerWeight.of(frame, calls);
        if (weight > weightLimit) {
          refused = true;
          ReferenceCountUtil.release(msg);
          ctx.fireExceptionCaught(
              weight == AnswerWeight.REFUSED
                  ? malformed(ctx.channel().remoteAddress())
                  : tooHeavy(weight, ctx.channel().remoteAddress()));
          return;
        }
        if (IN_FLIGHT.addAndGet(weight) > inFlightLimit) {
          IN_FLIGHT.addAndGet(-weight);
          refused = true;
          ReferenceCountUtil.release(msg);
          ctx.fireExceptionCaught(busy(weight, ctx.channel().remoteAddress()));
          return;
        }
        try {
          TableNameCache.bound();
          ByteBuf known;
          try {
            known = ExceptionNames.rewritten(frame);
          } catch (RuntimeException | Error e) {
            refused = true;
            frame.release();
            ctx.fireExceptionCaught(e);
            return;
          }
          if (known != null) {
            frame.release();
            msg = known;
          }
          if (once) {
            ctx.pipeline().remove(this);
          }
          ctx.fireChannelRead(msg); // HBase's parse, on this thread
        } finally {
          IN_FLIGHT.addAndGet(-weight);
        }
        return;
      }
      ctx.fireChannelRead(msg);
    }
  }

  /**
   * Hadoop's {@code RemoteException} of a SASL error ({@code SaslChallengeDecoder}) names a class
   * the server chose, which Hadoop's {@code unwrapRemoteException} loads and initialises: one whose
   * name is not {@link ExceptionNames#known} becomes a plain IOException that says so.
   */
  static final class SaslErrors extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      Throwable c = cause;
      for (int i = 0; c != null && i < 10; i++, c = c.getCause()) {
        if (c instanceof org.apache.hadoop.ipc.RemoteException r
            && !ExceptionNames.known(r.getClassName())) {
          String m = r.getMessage() == null ? "" : r.getMessage();
          ctx.fireExceptionCaught(
              new java.io.IOException(
                  "SASL with "
                      + ctx.channel().remoteAddress()
                      + " failed: the server answered with exception class "
                      + ExceptionNames.shown(r.getClassName())
                      + ", which the operator's HBase client does not load: "
                      + (m.length() <= 1000 ? m : m.substring(0, 1000) + "...")));
          return;
        }
      }
      ctx.fireExceptionCaught(cause);
    }
  }

  /**
   * A sixteenth of the heap: the parses on the event loop's threads and the answers callers still
   * hold add up (a namespace has at most 8 connections).
   */
  private static volatile long weightLimit = Runtime.getRuntime().maxMemory() / 16;

  /**
   * The weight of the answers being parsed now, on all the event loop's threads (Netty's default:
   * twice the cores the JVM sees, which without a CPU limit are the node's): each may weigh up to
   * {@link #weightLimit}, so their sum has a limit of its own, a quarter of the heap. An answer
   * that would pass it is refused like a heavy one, and its call fails; the next reconcile asks
   * again.
   */
  private static final java.util.concurrent.atomic.AtomicLong IN_FLIGHT =
      new java.util.concurrent.atomic.AtomicLong();

  private static volatile long inFlightLimit = Runtime.getRuntime().maxMemory() / 4;

  /** For tests: a limit on the answers parsed at once other than a quarter of the heap. */
  static void inFlightLimit(long bytes) {
    inFlightLimit = bytes;
  }

  /** The weight being parsed now. */
  static long inFlight() {
    return IN_FLIGHT.get();
  }

  static IllegalStateException busy(long weight, SocketAddress from) {
    return new IllegalStateException(
        "an answer from "
            + from
            + " of about "
            + (weight >> 20)
            + " MiB once parsed arrived while the operator was parsing other large HBase answers"
            + " (at most "
            + (inFlightLimit >> 20)
            + " MiB at once, a quarter of its heap); the connection is closed, the next reconcile"
            + " asks again");
  }

  /** The most heap one answer may take once parsed, by {@link AnswerWeight}'s estimate. */
  static long weightLimit() {
    return weightLimit;
  }

  /** For tests: a weight limit other than a sixteenth of the heap. */
  static void weightLimit(long bytes) {
    weightLimit = bytes;
  }

  static IllegalStateException malformed(SocketAddress from) {
    return new IllegalStateException(
        "an answer from "
            + from
            + " is not one the operator's HBase client reads (a cell block it did not ask for, a"
            + " response header over 1 MiB, an answer to a call it did not make, or a response"
            + " that does not read as protobuf to its end); the connection is closed");
  }

  static IllegalStateException tooHeavy(long weight, SocketAddress from) {
    return new IllegalStateException(
        "an answer from "
            + from
            + " would take about "
            + (weight >> 20)
            + " MiB of heap once parsed, more than the operator allows one answer ("
            + (weightLimit >> 20)
            + " MiB, a sixteenth of its heap; a larger cluster's answers need a larger operator heap);"
            + " the connection is closed");
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
}
