package dev.hbase.cache.operator.hbase;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClusterStatusProtos.ClusterStatus;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClusterStatusProtos.LiveServerInfo;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClusterStatusProtos.RegionLoad;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClusterStatusProtos.ServerLoad;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClusterStatusProtos.StoreSequenceId;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos.RegionSpecifier;
import org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos.ServerName;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.GetClusterStatusResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.IsMasterRunningResponse;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ResponseHeader;
import org.apache.hbase.thirdparty.com.google.protobuf.ByteString;
import org.apache.hbase.thirdparty.com.google.protobuf.Message;
import org.apache.hbase.thirdparty.com.google.protobuf.UnknownFieldSet;
import org.apache.hbase.thirdparty.io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/**
 * {@link AnswerWeight} on answers built with HBase 2.6.4's own message classes, framed as HBase
 * frames them (the response header and the response, each length-delimited). The heap figure it
 * must not fall below: 188 bytes per parsed empty {@code RegionLoad}, measured with these classes
 * (1,000,000 of them, 2,000,012 bytes on the wire: 188 MiB of heap).
 */
class AnswerWeightTest {
  static final long MEASURED_PER_EMPTY_REGION_LOAD = 188;

  @Test
  void emptyRegionLoadsWeighAtLeastTheHeapTheirParseTakes() throws IOException {
    int n = 100_000;
    byte[] frame = frame(status(n, RegionLoad.newBuilder().buildPartial()));
    assertThat(frame.length).isLessThan(n * 3);
    assertThat(weight(frame, STATUS)).isGreaterThanOrEqualTo(n * MEASURED_PER_EMPTY_REGION_LOAD);
  }

  @Test
  void aMessageCutShortIsRefused() throws IOException {
    int n = 50_000;
    byte[] whole = frame(status(n, RegionLoad.newBuilder().buildPartial()));
    // the last byte made a varint that goes on past the frame's end: a parse would find it only
    // after building every RegionLoad before it, and HBase's reader would fail; refused whole
    byte[] cut = whole.clone();
    cut[cut.length - 1] = (byte) 0x80;
    assertThat(weight(cut, STATUS)).isEqualTo(AnswerWeight.REFUSED);
  }

  @Test
  void manyUnknownFieldsWeighMoreThanTheirBytes() throws IOException {
    int n = 100_000;
    UnknownFieldSet.Field.Builder values = UnknownFieldSet.Field.newBuilder();
    for (int i = 0; i < n; i++) {
      values.addVarint(i & 0x7F);
    }
    var response =
        IsMasterRunningResponse.newBuilder()
            .setIsMasterRunning(true)
            .setUnknownFields(UnknownFieldSet.newBuilder().addField(16, values.build()).build())
            .build();
    byte[] frame = frame(response);
    // a boxed Long and its list slot per value, ~24 bytes, for 3 bytes on the wire
    assertThat(weight(frame, RUNNING)).isGreaterThanOrEqualTo(n * 24L);
  }

  @Test
  void aRealLookingClusterStatusWeighsAFewTimesItsBytes() throws IOException {
    int regions = 5_000;
    ServerLoad.Builder load = ServerLoad.newBuilder();
    for (int i = 0; i < regions; i++) {
      load.addRegionLoads(
          RegionLoad.newBuilder()
              .setRegionSpecifier(
                  RegionSpecifier.newBuilder()
                      .setType(RegionSpecifier.RegionSpecifierType.REGION_NAME)
                      .setValue(
                          ByteString.copyFromUtf8(
                              "usertable,user"
                                  + (1000 + i)
                                  + ",1764000000000.0123456789abcdef"
                                  + i
                                  + ".")))
              .setStores(2)
              .setStorefiles(6)
              .setStorefileSizeMB(1024 + i)
              .setReadRequestsCount(1_000_000L + i)
              .setWriteRequestsCount(50_000L + i)
              .setCompleteSequenceId(123_456_789L + i)
              .setDataLocality(0.97f)
              .addStoreCompleteSequenceId(
                  StoreSequenceId.newBuilder()
                      .setFamilyName(ByteString.copyFromUtf8("cf"))
                      .setSequenceId(123_456_000L + i))
              .build());
    }
    byte[] frame = frame(withServer(load));
    long w = weight(frame, STATUS);
    assertThat(w).isGreaterThan(frame.length);
    // each region: 3 messages and a string on ~130 bytes; errs high, but within 10 times
    assertThat(w).isLessThan(10L * frame.length);
  }

  @Test
  void aBlobOfBytesWeighsItsSize() throws IOException {
    var response =
        IsMasterRunningResponse.newBuilder()
            .setIsMasterRunning(true)
            .setUnknownFields(
                UnknownFieldSet.newBuilder()
                    .addField(
                        1000,
                        UnknownFieldSet.Field.newBuilder()
                            .addLengthDelimited(ByteString.copyFrom(new byte[200 << 10]))
                            .build())
                    .build())
            .build();
    byte[] frame = frame(response);
    // an unknown field's bytes are kept as they are: a copy, not parsed
    assertThat(weight(frame, RUNNING)).isBetween((long) frame.length, 2L * frame.length + 4_096);
  }

  /**
   * A value over 256 KiB is refused: HBase parses some values again (a meta cell as a RegionInfo,
   * an hbase:rsgroup cell as an RSGroupInfo), where unknown fields packed into it are a hundred
   * times their bytes and out of the walk's sight.
   */
  @Test
  void aValueHBaseMayParseAgainIsRefusedOverItsCap() throws IOException {
    byte[] name = new byte[AnswerWeight.MAX_VALUE + 1];
    java.util.Arrays.fill(name, (byte) 'a');
    byte[] big =
        frame(
            withServer(
                ServerLoad.newBuilder()
                    .addRegionLoads(
                        RegionLoad.newBuilder()
                            .setRegionSpecifier(
                                RegionSpecifier.newBuilder()
                                    .setType(RegionSpecifier.RegionSpecifierType.REGION_NAME)
                                    .setValue(ByteString.copyFrom(name)))
                            .buildPartial())));
    assertThat(weight(big, STATUS)).isEqualTo(AnswerWeight.REFUSED);
    byte[] fits =
        frame(
            withServer(
                ServerLoad.newBuilder()
                    .addRegionLoads(
                        RegionLoad.newBuilder()
                            .setRegionSpecifier(
                                RegionSpecifier.newBuilder()
                                    .setType(RegionSpecifier.RegionSpecifierType.REGION_NAME)
                                    .setValue(ByteString.copyFrom(name, 0, AnswerWeight.MAX_VALUE)))
                            .buildPartial())));
    assertThat(weight(fits, STATUS)).isLessThan(AnswerWeight.REFUSED);
  }

  @Test
  void bytesThatAreNoProtobufAreRefused() {
    byte[] noise = new byte[64 << 10];
    new java.util.Random(7).nextBytes(noise);
    assertThat(weight(noise, STATUS)).isEqualTo(AnswerWeight.REFUSED);
  }

  /**
   * The reviewer's bypass of the first estimator: the response's length written as a 5-byte varint
   * with bit 32 set, which protobuf reads as its low 32 bits and the estimator read as past the
   * end. Now read as protobuf reads it.
   */
  @Test
  void aLengthWithHighBitsIsReadAsProtobufReadsIt() throws IOException {
    int n = 50_000;
    var out = new ByteArrayOutputStream();
    ResponseHeader.newBuilder().setCallId(1).build().writeDelimitedTo(out);
    byte[] response = status(n, RegionLoad.newBuilder().buildPartial()).toByteArray();
    int len = response.length;
    out.write(0x80 | (len & 0x7F));
    out.write(0x80 | ((len >>> 7) & 0x7F));
    out.write(0x80 | ((len >>> 14) & 0x7F));
    out.write(0x80 | ((len >>> 21) & 0x7F));
    out.write(((len >>> 28) & 0x0F) | 0x10); // bit 32 set: beyond an int, dropped by protobuf
    out.write(response);
    byte[] frame = withLength(out.toByteArray());
    assertThat(weight(frame, STATUS)).isGreaterThanOrEqualTo(n * MEASURED_PER_EMPTY_REGION_LOAD);
  }

  @Test
  void groupsCountAsMessages() throws IOException {
    int n = 50_000;
    var out = new ByteArrayOutputStream();
    for (int i = 0; i < n; i++) {
      out.write((16 << 3) | 3); // start group, field 16 (two-byte tag)
      out.write(0x01);
      out.write((16 << 3) | 4); // its end
      out.write(0x01);
    }
    byte[] body = out.toByteArray();
    var framed = new ByteArrayOutputStream();
    ResponseHeader.newBuilder().setCallId(1).build().writeDelimitedTo(framed);
    writeVarint(framed, body.length);
    framed.write(body);
    byte[] frame = withLength(framed.toByteArray());
    assertThat(weight(frame, RUNNING)).isGreaterThanOrEqualTo(n * AnswerWeight.UNKNOWN);
  }

  @Test
  void aCellBlockOrTrailingBytesAreRefused() throws IOException {
    byte[] answer = frame(IsMasterRunningResponse.newBuilder().setIsMasterRunning(true).build());
    assertThat(weight(answer, RUNNING)).isLessThan(AnswerWeight.REFUSED);
    byte[] trailing = withLength(java.util.Arrays.copyOfRange(answer, 4, answer.length + 8));
    assertThat(weight(trailing, RUNNING)).isEqualTo(AnswerWeight.REFUSED);
    assertThat(AnswerWeight.of(Unpooled.wrappedBuffer(answer), id -> null))
        .as("an answer to a call the connection did not make")
        .isEqualTo(AnswerWeight.REFUSED);
    var out = new ByteArrayOutputStream();
    ResponseHeader.newBuilder()
        .setCallId(1)
        .setCellBlockMeta(
            org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.CellBlockMeta.newBuilder()
                .setLength(16))
        .build()
        .writeDelimitedTo(out);
    IsMasterRunningResponse.newBuilder().setIsMasterRunning(true).build().writeDelimitedTo(out);
    assertThat(weight(withLength(out.toByteArray()), RUNNING)).isEqualTo(AnswerWeight.REFUSED);
  }

  @Test
  void anExceptionHeaderAloneIsWeighedAsItsBytes() throws IOException {
    var out = new ByteArrayOutputStream();
    ResponseHeader.newBuilder()
        .setCallId(1)
        .setException(
            org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ExceptionResponse
                .newBuilder()
                .setExceptionClassName("org.apache.hadoop.hbase.ipc.ServerNotRunningYetException")
                .setStackTrace("at ..."))
        .build()
        .writeDelimitedTo(out);
    byte[] frame = withLength(out.toByteArray());
    assertThat(weight(frame, RUNNING)).isEqualTo(frame.length);
    // the call it ends is let go of too (else every call answered with an exception stayed noted)
    java.util.Set<Integer> asked = new java.util.HashSet<>(java.util.Set.of(1));
    AnswerWeight.of(
        Unpooled.wrappedBuffer(frame),
        id -> asked.remove(id) ? RUNNING.getDescriptorForType() : null);
    assertThat(asked).isEmpty();
  }

  /**
   * Table names go into HBase's static, never-emptied cache as the answer is converted: one answer
   * may name at most {@link AnswerWeight#MAX_TABLES} different ones; the same name many times (a
   * server's many regions of one table) is one.
   */
  @Test
  void anAnswerThatNamesTooManyTablesIsRefused() throws IOException {
    var many =
        org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.GetTableNamesResponse
            .newBuilder();
    var one =
        org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.GetTableNamesResponse
            .newBuilder();
    for (int i = 0; i <= AnswerWeight.MAX_TABLES; i++) {
      many.addTableNames(table("t" + i));
      one.addTableNames(table("t"));
    }
    Message type =
        org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos.GetTableNamesResponse
            .getDefaultInstance();
    assertThat(weight(frame(many.build()), type)).isEqualTo(AnswerWeight.REFUSED);
    assertThat(weight(frame(one.build()), type)).isLessThan(1 << 20);
    many.removeTableNames(0);
    assertThat(weight(frame(many.build()), type)).isLessThan(1 << 20);
  }

  private static org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos.TableName table(
      String name) {
    return org.apache.hadoop.hbase.shaded.protobuf.generated.HBaseProtos.TableName.newBuilder()
        .setNamespace(ByteString.copyFromUtf8("default"))
        .setQualifier(ByteString.copyFromUtf8(name))
        .build();
  }

  private static void writeVarint(ByteArrayOutputStream out, int v) {
    while ((v & ~0x7F) != 0) {
      out.write((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    out.write(v);
  }

  private static byte[] withLength(byte[] rest) throws IOException {
    var framed = new ByteArrayOutputStream();
    new java.io.DataOutputStream(framed).writeInt(rest.length);
    framed.write(rest);
    return framed.toByteArray();
  }

  /** The weight of a frame answering call 1, a call for {@code type}. */
  private static long weight(byte[] frame, Message type) {
    return AnswerWeight.of(
        Unpooled.wrappedBuffer(frame), id -> id == 1 ? type.getDescriptorForType() : null);
  }

  private static final Message STATUS = GetClusterStatusResponse.getDefaultInstance();
  private static final Message RUNNING = IsMasterRunningResponse.getDefaultInstance();

  private static GetClusterStatusResponse status(int n, RegionLoad each) {
    ServerLoad.Builder load = ServerLoad.newBuilder();
    for (int i = 0; i < n; i++) {
      load.addRegionLoads(each);
    }
    return withServer(load);
  }

  private static GetClusterStatusResponse withServer(ServerLoad.Builder load) {
    return GetClusterStatusResponse.newBuilder()
        .setClusterStatus(
            ClusterStatus.newBuilder()
                .addLiveServers(
                    LiveServerInfo.newBuilder()
                        .setServer(
                            ServerName.newBuilder()
                                .setHostName("rs-0.rs.ns.svc")
                                .setPort(16020)
                                .setStartCode(1L))
                        .setServerLoad(load.buildPartial())
                        .buildPartial())
                .buildPartial())
        .buildPartial();
  }

  /** As HBase's frame decoder passes an answer on: its 4-byte length, header and response. */
  static byte[] frame(Message response) throws IOException {
    var body = new ByteArrayOutputStream();
    ResponseHeader.newBuilder().setCallId(1).build().writeDelimitedTo(body);
    response.writeDelimitedTo(body);
    var framed = new ByteArrayOutputStream();
    new java.io.DataOutputStream(framed).writeInt(body.size());
    body.writeTo(framed);
    return framed.toByteArray();
  }
}
