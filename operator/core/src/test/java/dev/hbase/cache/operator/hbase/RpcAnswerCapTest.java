package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Duration;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ResponseHeader;
import org.apache.hbase.thirdparty.com.google.protobuf.ByteString;
import org.apache.hbase.thirdparty.com.google.protobuf.UnknownFieldSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's HBase client against a master a tenant runs: HBase's own client code (its Netty
 * RPC client, made from the operator's {@link AdminHBaseCluster#configuration}), a fake HMaster on
 * a socket that speaks HBase's wire format. An answer above the cap fails the call at once and
 * closes the connection, without the operator reading it; one below it, larger than Netty's usual
 * buffers, is read as before.
 */
class RpcAnswerCapTest {
  private FakeMaster master;

  @AfterEach
  void stop() throws IOException {
    if (master != null) {
      master.close();
    }
  }

  @Test
  void anAnswerAboveTheCapFailsTheCallAtOnceAndIsNotRead() throws Exception {
    int claimed = 64 << 20; // four times the default cap
    master = new FakeMaster(out -> streamZeros(out, claimed));
    long start = System.nanoTime();
    // the message the caller (and so the policy's status) gets names the cap and the setting
    assertThatThrownBy(this::askIsMasterRunning)
        .hasMessageContaining("cap on HBase answers")
        .hasMessageContaining("cap 16 MiB, HBASE_ANSWER_CAP_MIB");
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    // the call's own deadline is 60 s; without the cap it ran to it (seen: 64 MiB read, then
    // nothing could match the frame to the call)
    assertThat(took).isLessThan(Duration.ofSeconds(20));
    master.awaitClosed(Duration.ofSeconds(20));
    // the cap, plus what the two sockets' kernel buffers held when the client closed
    assertThat(master.sent.get()).isLessThan(40L << 20);
  }

  /**
   * Under the byte cap, but a parse that would take far more heap than its bytes: 500,000 unknown
   * varint fields, 1.5 MB on the wire, a boxed value each once parsed. Refused before HBase parses
   * it (here with a weight limit of 4 MiB, as on a 64 MiB heap; by default a sixteenth of the
   * heap).
   */
  @Test
  void anAnswerThatWouldTakeTooMuchHeapIsRefusedBeforeItIsParsed() throws Exception {
    long limit = RpcAnswerCap.weightLimit();
    RpcAnswerCap.weightLimit(4 << 20);
    try {
      master = new FakeMaster(out -> answer(out, 0, 500_000));
      long start = System.nanoTime();
      assertThatThrownBy(this::askIsMasterRunning)
          .hasMessageContaining("MiB of heap once parsed")
          .hasMessageContaining("(4 MiB, a sixteenth of its heap");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    } finally {
      RpcAnswerCap.weightLimit(limit);
    }
  }

  /**
   * A header that names a cell block of 2 GiB, in a frame of a few bytes: HBase 2.6.4's client
   * allocates the cell block by that length before it reads it ({@code RpcConnection.finishCall}),
   * which is an OutOfMemoryError whatever the byte cap (the reviewer's test: the JVM exited under
   * the chart's heap). The operator's client asks for no cell blocks, and a frame that has one is
   * refused before HBase reads it.
   */
  @Test
  void aCellBlockTheClientDidNotAskForIsRefused() throws Exception {
    master =
        new FakeMaster(
            out -> {
              var header =
                  ResponseHeader.newBuilder()
                      .setCallId(master.callId)
                      .setCellBlockMeta(
                          org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.CellBlockMeta
                              .newBuilder()
                              .setLength(Integer.MAX_VALUE - 16))
                      .build();
              FakeMaster.send(
                  out,
                  header,
                  IsMasterRunningResponse.newBuilder().setIsMasterRunning(true).build());
            });
    assertThatThrownBy(this::askIsMasterRunning)
        .hasMessageContaining("a cell block it did not ask for");
  }

  /**
   * An exception named by a class the client does not know: HBase's client would look the name up
   * as a class on its event loop (and the JDK keep a lock for it for good); it gets the stand-in
   * instead, with the name in the message. A known name reaches the caller as it is.
   */
  @Test
  void anExceptionClassTheClientDoesNotKnowIsNotLookedUp() throws Exception {
    master = new FakeMaster(out -> exception(out, "org.example.Evil" + "x".repeat(10_000)));
    assertThatThrownBy(this::askIsMasterRunning)
        .hasStackTraceContaining(ExceptionNames.STAND_IN)
        .hasStackTraceContaining("which the operator's HBase client does not load")
        .hasStackTraceContaining("org.example.Evilxxx")
        .satisfies(t -> assertThat(stackTrace(t)).doesNotContain("x".repeat(200)));
    master.close();
    master = new FakeMaster(out -> exception(out, "org.apache.hadoop.hbase.PleaseHoldException"));
    assertThatThrownBy(this::askIsMasterRunning)
        .hasStackTraceContaining("PleaseHoldException")
        .satisfies(t -> assertThat(stackTrace(t)).doesNotContain("does not load"));
  }

  private void exception(DataOutputStream out, String className) throws IOException {
    var header =
        ResponseHeader.newBuilder()
            .setCallId(master.callId)
            .setException(
                org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ExceptionResponse
                    .newBuilder()
                    .setExceptionClassName(className)
                    .setStackTrace("at the fake master"))
            .build();
    FakeMaster.send(out, header);
  }

  private static String stackTrace(Throwable t) {
    var w = new java.io.StringWriter();
    t.printStackTrace(new java.io.PrintWriter(w));
    return w.toString();
  }

  @Test
  void anAnswerBelowTheCapIsReadWhole() throws Exception {
    int padding = 8 << 20;
    master = new FakeMaster(out -> answer(out, padding, 0));
    assertThat(askIsMasterRunning().getIsMasterRunning()).isTrue();
  }

  @Test
  void theCapIsASettingWithBounds() {
    assertThat(RpcAnswerCap.parseMib(null)).isEqualTo(RpcAnswerCap.DEFAULT_MIB);
    assertThat(RpcAnswerCap.parseMib(" 64 ")).isEqualTo(64);
    assertThatThrownBy(() -> RpcAnswerCap.parseMib("16Mi"))
        .hasMessageContaining("HBASE_ANSWER_CAP_MIB");
    assertThatThrownBy(() -> RpcAnswerCap.limitMib(0)).hasMessageContaining("between 1 and 1024");
    assertThatThrownBy(() -> RpcAnswerCap.limitMib(2048))
        .hasMessageContaining("between 1 and 1024");
    assertThat(RpcAnswerCap.limit()).isEqualTo(RpcAnswerCap.DEFAULT_MIB << 20);
  }

  private IsMasterRunningResponse askIsMasterRunning() throws Exception {
    return master.askIsMasterRunning(Duration.ofSeconds(60));
  }

  /** A frame header that claims {@code claimed} bytes, then zeros as fast as they are taken. */
  private void streamZeros(DataOutputStream out, int claimed) throws IOException {
    out.writeInt(claimed);
    byte[] chunk = new byte[64 << 10];
    for (long left = claimed; left > 0; left -= chunk.length) {
      out.write(chunk);
      master.sent.addAndGet(chunk.length);
    }
    out.flush();
  }

  /**
   * A well-formed answer to call 0 (the client's first): the response, padded with an unknown
   * field.
   */
  private void answer(DataOutputStream out, int padding, int varints) throws IOException {
    var header = ResponseHeader.newBuilder().setCallId(master.callId).build();
    UnknownFieldSet.Field.Builder values = UnknownFieldSet.Field.newBuilder();
    for (int i = 0; i < varints; i++) {
      values.addVarint(i & 0x7F);
    }
    var response =
        IsMasterRunningResponse.newBuilder()
            .setIsMasterRunning(true)
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(1000, padding(padding))
                    .addField(16, values.build())
                    .build())
            .build();
    master.sent.addAndGet(FakeMaster.send(out, header, response));
  }

  /** {@code bytes} of zeros in values of 200 KiB each: under the cap on one value. */
  private static UnknownFieldSet.Field padding(int bytes) {
    UnknownFieldSet.Field.Builder f = UnknownFieldSet.Field.newBuilder();
    for (int left = bytes; left > 0; left -= 200 << 10) {
      f.addLengthDelimited(ByteString.copyFrom(new byte[Math.min(left, 200 << 10)]));
    }
    return f.build();
  }
}
