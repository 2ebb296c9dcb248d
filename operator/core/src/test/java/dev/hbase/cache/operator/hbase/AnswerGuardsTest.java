package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.MetricsConnection;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ExceptionResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ResponseHeader;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.SecurityPreamableResponse;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hbase.thirdparty.com.google.protobuf.RpcCallback;
import org.apache.hbase.thirdparty.com.google.protobuf.UnknownFieldSet;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;
import org.apache.hbase.thirdparty.io.netty.buffer.Unpooled;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelHandlerContext;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelInboundHandlerAdapter;
import org.apache.hbase.thirdparty.io.netty.channel.ChannelPipeline;
import org.apache.hbase.thirdparty.io.netty.channel.embedded.EmbeddedChannel;
import org.apache.hbase.thirdparty.io.netty.channel.nio.NioEventLoopGroup;
import org.apache.hbase.thirdparty.io.netty.handler.codec.DecoderException;
import org.junit.jupiter.api.Test;

/**
 * The guards around HBase's client that are not the answer's weight: which exception class names a
 * server may have the client look up (RPC answers, SASL errors), the weighing of a preamble call's
 * answer, the closing of a connection whose parser has no weigher before it, and the bound on
 * HBase's static table-name cache. HBase 2.6.4's own handlers and messages; the RPC path end to end
 * is {@link RpcAnswerCapTest}'s.
 */
class AnswerGuardsTest {

  @Test
  void theKnownNamesAreTheClassesTheClientCouldLoad() {
    assertThat(ExceptionNames.count()).isGreaterThan(200);
    // a runtime exception HBase's client cannot unwrap into an IOException, a shaded one
    assertThat(ExceptionNames.known("java.lang.NullPointerException")).isFalse();
    assertThat(
            ExceptionNames.known(
                "org.apache.hbase.thirdparty.com.google.protobuf.InvalidProtocolBufferException"))
        .isFalse();
    assertThat(ExceptionNames.known("java.io.IOException")).isTrue();
    assertThat(ExceptionNames.known("org.apache.hadoop.hbase.DoNotRetryIOException")).isTrue();
    assertThat(ExceptionNames.known("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException"))
        .isTrue();
    assertThat(ExceptionNames.known("org.apache.hadoop.security.AccessControlException")).isTrue();
    assertThat(ExceptionNames.known("javax.security.sasl.SaslException")).isTrue();
    assertThat(ExceptionNames.known("org.apache.hadoop.hbase.NotServingRegionException")).isTrue();
    assertThat(ExceptionNames.known("org.apache.hadoop.hbase.exceptions.RegionMovedException"))
        .isTrue();
    // a class that is no exception, one that does not exist, and names that are no class names
    assertThat(ExceptionNames.known("org.apache.hadoop.hbase.client.Admin")).isFalse();
    assertThat(ExceptionNames.known("org.example.NoSuchException")).isFalse();
    assertThat(ExceptionNames.known("java.io.IOException ")).isFalse();
    assertThat(ExceptionNames.known("java..IOException")).isFalse();
    assertThat(ExceptionNames.known(null)).isFalse();
    assertThat(ExceptionNames.shown("a\nb" + "c".repeat(200))).hasSizeLessThan(150).contains("a?b");
  }

  @Test
  void anAnswerNamingAnUnknownClassIsRewrittenAndAKnownOneIsNot() throws IOException {
    String evil = "org.example." + "A".repeat(60_000) + "Exception";
    ByteBuf rewritten = ExceptionNames.rewritten(Unpooled.wrappedBuffer(exception(evil)));
    assertThat(rewritten).isNotNull();
    ResponseHeader h = header(rewritten);
    assertThat(h.getCallId()).isEqualTo(7);
    assertThat(h.getException().getExceptionClassName()).isEqualTo(ExceptionNames.STAND_IN);
    assertThat(h.getException().getDoNotRetry()).isTrue();
    assertThat(h.getException().getStackTrace())
        .contains("does not load")
        .contains("60021 characters")
        .endsWith("at the server");
    assertThat(h.getException().getStackTrace().length()).isLessThan(400);
    // a frame of the right length: HBase's reader takes its length first
    assertThat(rewritten.getInt(0)).isEqualTo(rewritten.readableBytes() - 4);
    assertThat(
            ExceptionNames.rewritten(
                Unpooled.wrappedBuffer(exception("org.apache.hadoop.hbase.PleaseHoldException"))))
        .isNull();
  }

  @Test
  void aSaslErrorNamingAnUnknownClassReachesHBaseAsAPlainIOException() {
    List<Throwable> seen = new ArrayList<>();
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new RpcAnswerCap.SaslErrors(),
            new ChannelInboundHandlerAdapter() {
              @Override
              public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                seen.add(cause);
              }
            });
    // as SaslChallengeDecoder's error reaches the next handler: in a DecoderException
    ch.pipeline()
        .fireExceptionCaught(
            new DecoderException(new RemoteException("org.example.Evil" + "x".repeat(500), "no")));
    ch.pipeline()
        .fireExceptionCaught(
            new DecoderException(
                new RemoteException("org.apache.hadoop.security.AccessControlException", "no")));
    assertThat(seen).hasSize(2);
    assertThat(seen.get(0))
        .isExactlyInstanceOf(IOException.class)
        .hasMessageContaining("does not load")
        .hasNoCause();
    assertThat(seen.get(1)).isInstanceOf(DecoderException.class);
    assertThat(seen.get(1).getCause()).isInstanceOf(RemoteException.class);
    ch.finishAndReleaseAll();
  }

  /**
   * A Kerberos client with more than one candidate server principal asks the server for its own
   * ({@code PreambleCallHandler}), with its own frame decoder: the answer is weighed there too.
   */
  @Test
  void aPreambleCallsAnswerIsWeighed() throws Exception {
    long limit = RpcAnswerCap.weightLimit();
    RpcAnswerCap.weightLimit(4 << 20);
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    try {
      RpcAnswerCap.Channel ch = new RpcAnswerCap.Channel();
      group.register(ch).sync();
      Object call = preambleCall();
      ch.eventLoop()
          .submit(
              () -> {
                ChannelPipeline p = ch.pipeline();
                p.addLast(RpcAnswerCap.BUFFER_CALL, new ChannelInboundHandlerAdapter());
                Method setup =
                    Class.forName(RpcAnswerCap.PREAMBLE)
                        .getDeclaredMethod(
                            "setup",
                            ChannelPipeline.class,
                            int.class,
                            Class.forName("org.apache.hadoop.hbase.ipc.NettyRpcConnection"),
                            byte[].class,
                            call.getClass());
                setup.setAccessible(true);
                setup.invoke(null, p, 60_000, null, new byte[6], call);
                // 500,000 unknown varints: 1.5 MB on the wire, far more once parsed
                UnknownFieldSet.Field.Builder values = UnknownFieldSet.Field.newBuilder();
                for (int i = 0; i < 500_000; i++) {
                  values.addVarint(i & 0x7F);
                }
                var response =
                    SecurityPreamableResponse.newBuilder()
                        .setServerPrincipal("hbase/x@X")
                        .setUnknownFields(
                            UnknownFieldSet.newBuilder().addField(16, values.build()).build())
                        .build();
                var frame = new ByteArrayOutputStream();
                ResponseHeader.newBuilder().setCallId(-1).build().writeDelimitedTo(frame);
                response.writeDelimitedTo(frame);
                ByteBuf b = Unpooled.buffer();
                b.writeInt(frame.size()).writeBytes(frame.toByteArray());
                p.fireChannelRead(b);
                return null;
              })
          .get(30, TimeUnit.SECONDS);
      Field error = call.getClass().getDeclaredField("error");
      error.setAccessible(true);
      assertThat((Throwable) error.get(call))
          .isNotNull()
          .hasStackTraceContaining("MiB of heap once parsed");
      ch.close().sync();
    } finally {
      RpcAnswerCap.weightLimit(limit);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void aConnectionSetUpWithNoWeigherIsClosedAtItsFirstRead() throws Exception {
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    try {
      RpcAnswerCap.Channel ch = new RpcAnswerCap.Channel();
      group.register(ch).sync();
      // set up (no BufferCall left), and a parser added where the pipeline's proxy did not see it
      assertThatThrownBy(() -> ch.doReadBytes(Unpooled.buffer(16)))
          .isInstanceOf(IOException.class)
          .hasMessageContaining("no weigher before HBase's parser");
      // while it is being set up, reads go on (here to a socket never connected)
      ch.eventLoop()
          .submit(
              () ->
                  ch.pipeline()
                      .addLast(RpcAnswerCap.BUFFER_CALL, new ChannelInboundHandlerAdapter()))
          .get(30, TimeUnit.SECONDS);
      assertThatThrownBy(() -> ch.doReadBytes(Unpooled.buffer(16)))
          .satisfies(t -> assertThat(t).hasMessageNotContaining("no weigher"));
      ch.close().sync();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void hbasesTableNameCacheIsEmptiedPastItsBound() {
    for (int i = 0; TableNameCache.size() <= TableNameCache.MAX; i++) {
      TableName.valueOf("ns" + i, "t" + i);
    }
    long emptied = TableNameCache.emptied();
    TableNameCache.bound();
    assertThat(TableNameCache.size()).isZero();
    assertThat(TableNameCache.emptied()).isEqualTo(emptied + 1);
    // made again after, and equal to one made before
    TableName before = TableName.valueOf("ns1", "t1");
    TableNameCache.bound();
    assertThat(TableName.valueOf("ns1", "t1")).isEqualTo(before);
    assertThat(TableNameCache.emptied()).isEqualTo(emptied + 1);
  }

  /**
   * Answers parsed at once, on all the event loop's threads, have a limit of their own (a quarter
   * of the heap): each may weigh up to a sixteenth, and without a CPU limit the loop has twice the
   * node's cores. Here: an answer arrives on a second connection while the first's is being parsed.
   */
  @Test
  void answersParsedAtOnceHaveALimitInAll() throws Exception {
    long weightLimit = RpcAnswerCap.weightLimit();
    RpcAnswerCap.weightLimit(64 << 20);
    RpcAnswerCap.inFlightLimit(4 << 20);
    try {
      List<Throwable> second = new ArrayList<>();
      List<Object> parsed = new ArrayList<>();
      EmbeddedChannel b =
          new EmbeddedChannel(
              new RpcAnswerCap.Weigher(id -> RUNNING, false),
              new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                  parsed.add(msg);
                  ((ByteBuf) msg).release();
                }

                @Override
                public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                  second.add(cause);
                }
              });
      EmbeddedChannel a =
          new EmbeddedChannel(
              new RpcAnswerCap.Weigher(id -> RUNNING, false),
              new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                  // HBase's parse of the first answer is under way: the second one arrives
                  assertThat(RpcAnswerCap.inFlight()).isGreaterThan(2 << 20);
                  b.writeInbound(heavy());
                  ((ByteBuf) msg).release();
                }
              });
      a.writeInbound(heavy());
      assertThat(second).hasSize(1);
      assertThat(second.get(0)).hasMessageContaining("while the operator was parsing other large");
      assertThat(parsed).isEmpty();
      assertThat(RpcAnswerCap.inFlight()).isZero();
      // alone, the same answer is parsed
      EmbeddedChannel c = new EmbeddedChannel(new RpcAnswerCap.Weigher(id -> RUNNING, false));
      c.writeInbound(heavy());
      ByteBuf through = c.readInbound();
      assertThat(through).isNotNull();
      through.release();
      a.finishAndReleaseAll();
      b.finishAndReleaseAll();
      c.finishAndReleaseAll();
    } finally {
      RpcAnswerCap.weightLimit(weightLimit);
      RpcAnswerCap.inFlightLimit(Runtime.getRuntime().maxMemory() / 4);
    }
  }

  /**
   * A connection keeps the response type of each call it sent until the answer comes; calls HBase
   * gave up on (a server that never answers) are kept at most {@link
   * RpcAnswerCap#MAX_CALLS_AWAITED}: the oldest dropped, an answer to it refused as an answer to no
   * call, the newest still read.
   */
  @Test
  void theCallsAwaitedAreBoundedOldestDropped() throws Exception {
    Map<Integer, org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.Descriptor> calls =
        RpcAnswerCap.callsSent();
    EmbeddedChannel ch =
        new EmbeddedChannel(
            new RpcAnswerCap.Weigher(calls::remove, false), new RpcAnswerCap.CallTap(calls));
    int sent = RpcAnswerCap.MAX_CALLS_AWAITED + 100;
    for (int id = 1; id <= sent; id++) {
      ch.writeOutbound(call(id));
    }
    assertThat(calls)
        .hasSize(RpcAnswerCap.MAX_CALLS_AWAITED)
        .containsKey(sent)
        .doesNotContainKey(1);
    ch.writeInbound(running(sent));
    ByteBuf read = ch.readInbound();
    assertThat(read).as("the newest call's answer").isNotNull();
    read.release();
    assertThatThrownBy(() -> ch.writeInbound(running(1)))
        .as("an answer to a call dropped long ago")
        .hasMessageContaining("an answer to a call it did not make");
    ch.finishAndReleaseAll();
  }

  /** An answer to call {@code id}: the master runs. */
  private static ByteBuf running(int id) throws IOException {
    var frame = new ByteArrayOutputStream();
    ResponseHeader.newBuilder().setCallId(id).build().writeDelimitedTo(frame);
    org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse
        .newBuilder()
        .setIsMasterRunning(true)
        .build()
        .writeDelimitedTo(frame);
    ByteBuf b = Unpooled.buffer();
    b.writeInt(frame.size()).writeBytes(frame.toByteArray());
    return b;
  }

  /** A call {@code id} as HBase's client makes one, that expects an IsMasterRunningResponse. */
  private static Object call(int id) throws ReflectiveOperationException {
    Class<?> c = Class.forName("org.apache.hadoop.hbase.ipc.Call");
    Constructor<?> k = c.getDeclaredConstructors()[0];
    k.setAccessible(true);
    RpcCallback<Object> done = x -> {};
    return k.newInstance(
        id,
        null,
        null,
        null,
        org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse
            .getDefaultInstance(),
        0,
        0,
        Map.of(),
        done,
        MetricsConnection.newCallStats());
  }

  private static final org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.Descriptor
      RUNNING =
          org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse
              .getDescriptor();

  /** An answer to call 1 of about 3 MiB once parsed: 18,000 unknown varint fields. */
  private static ByteBuf heavy() {
    try {
      UnknownFieldSet.Field.Builder values = UnknownFieldSet.Field.newBuilder();
      for (int i = 0; i < 18_000; i++) {
        values.addVarint(i & 0x7F);
      }
      var response =
          org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse
              .newBuilder()
              .setIsMasterRunning(true)
              .setUnknownFields(UnknownFieldSet.newBuilder().addField(16, values.build()).build())
              .build();
      var frame = new ByteArrayOutputStream();
      ResponseHeader.newBuilder().setCallId(1).build().writeDelimitedTo(frame);
      response.writeDelimitedTo(frame);
      ByteBuf b = Unpooled.buffer();
      b.writeInt(frame.size()).writeBytes(frame.toByteArray());
      return b;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** A call as {@code RpcConnection.createSecurityPreambleCall} makes it. */
  private static Object preambleCall() throws ReflectiveOperationException {
    Class<?> c = Class.forName("org.apache.hadoop.hbase.ipc.Call");
    Constructor<?> k = c.getDeclaredConstructors()[0];
    k.setAccessible(true);
    RpcCallback<Object> done = x -> {};
    return k.newInstance(
        -1,
        null,
        null,
        null,
        SecurityPreamableResponse.getDefaultInstance(),
        0,
        0,
        Map.of(),
        done,
        MetricsConnection.newCallStats());
  }

  private static byte[] exception(String className) throws IOException {
    var out = new ByteArrayOutputStream();
    ResponseHeader.newBuilder()
        .setCallId(7)
        .setException(
            ExceptionResponse.newBuilder()
                .setExceptionClassName(className)
                .setStackTrace("at the server"))
        .build()
        .writeDelimitedTo(out);
    var framed = new ByteArrayOutputStream();
    new java.io.DataOutputStream(framed).writeInt(out.size());
    out.writeTo(framed);
    return framed.toByteArray();
  }

  private static ResponseHeader header(ByteBuf frame) throws IOException {
    byte[] b = new byte[frame.readableBytes() - 4];
    frame.getBytes(4, b);
    return ResponseHeader.parseDelimitedFrom(new java.io.ByteArrayInputStream(b));
  }
}
