package dev.hbase.cache.operator.hbase;

import java.util.function.IntFunction;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos.ResponseHeader;
import org.apache.hbase.thirdparty.com.google.protobuf.CodedInputStream;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.Descriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.FieldDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.WireFormat;
import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;

/**
 * An upper estimate of the heap an HBase answer takes once parsed, read from its wire bytes with
 * the schema of the response the call expects; or a refusal of a frame HBase's client would not
 * read safely. Pure.
 *
 * <p>Why: protobuf's Java objects can be a hundred times their wire size. Measured with HBase
 * 2.6.4's classes: a {@code GetClusterStatusResponse} of 1,000,000 empty {@code RegionLoad}s is
 * 2,000,012 bytes on the wire and 188 MiB of heap once parsed (x99); 50,000 region load reports
 * with 60 unknown fields each, 9.2 MB and 449 MiB. A master that answers so would take the operator
 * past its heap with a few MB, well under any byte cap a real cluster's answers allow.
 *
 * <p>How: the frame is read as HBase's client reads it ({@code RpcConnection.readResponse}: a
 * 4-byte length, the response header, the response, each length-delimited), the response walked as
 * protobuf parses it against the response's descriptor: tags and lengths as protobuf's 32-bit
 * varints, unknown fields kept (each a {@code Field}, {@link #UNKNOWN} per occurrence; an unknown
 * group walked as one, unknown bytes not parsed), at most 100 levels deep. Each nested message
 * costs its object ({@link #objectSize}), each string or bytes value its length twice over, each
 * repeated value a slot, each map entry {@link #MAP_ENTRY}. Measured on 50,000 region load reports
 * as a 2.6.4 master sends them: ~140 bytes each on the wire, ~480 bytes of heap parsed, about 940
 * by this estimate (1,000,000 empty ones: 276 MiB estimated, 191 parsed; 50,000 with 60 unknown
 * fields each: 525 MiB estimated, 449 parsed).
 *
 * <p>Refused outright ({@link #REFUSED}): a header that does not read or is over 1 MiB; a cell
 * block (the operator's client asks for none, {@link RpcAnswerCap#install}: HBase allocates a cell
 * block by the length its header gives, before reading it); an answer to a call the connection did
 * not make; a response that does not read to the frame's end; a string or bytes value over 256 KiB
 * ({@link #MAX_VALUE}); an answer that names more than {@link #MAX_TABLES} tables.
 */
final class AnswerWeight {
  /** An unknown field's occurrence: a {@code Field} in a tree map, with its value list (~160). */
  static final long UNKNOWN = 176;

  /** A map entry: the entry message, its boxed key and value, the map's node. */
  static final long MAP_ENTRY = 160;

  /** A repeated value's slot (a reference, or a boxed or primitive element). */
  static final long SLOT = 16;

  /**
   * The largest string or bytes value read. HBase parses some values again as protobuf after the
   * walk, out of its sight: a cell of hbase:meta as a RegionInfo (on the event loop, when it
   * locates a region), one of hbase:rsgroup as an RSGroupInfo. A second review measured a
   * 2,000,003-byte value of 452,832 unknown fields: 86 MiB once parsed so. Honest values are a few
   * hundred bytes (a region's name and info) to tens of KB (a group of a thousand servers).
   */
  static final int MAX_VALUE = 256 << 10;

  /**
   * The most table names one answer may name. HBase's client puts every table name it parses into
   * {@code TableName}'s static cache, which is never emptied and is scanned on every lookup (a
   * second review: +2.9 MiB kept for good, and seconds of CPU on the shared event loop, per answer
   * of 10,000 new names; a third: 2.3 s of event-loop CPU for 4,096 new names against a cache of
   * 16,384). An honest answer names at most the tables whose regions one server holds; {@link
   * TableNameCache} bounds what many answers add up to.
   */
  static final int MAX_TABLES = 1024;

  /** HBase's {@code TableName} message. */
  private static final String TABLE_NAME = "hbase.pb.TableName";

  /** Protobuf's recursion limit: a parse fails deeper than this. */
  static final int MAX_DEPTH = 100;

  /** The weight of a frame that is refused whatever the limit. */
  static final long REFUSED = Long.MAX_VALUE;

  /**
   * The largest response header read: HBase's are tens of bytes, or an exception with its stack
   * trace (a server's StackOverflowError as a string is ~100 KB).
   */
  static final int MAX_HEADER = 1 << 20;

  private AnswerWeight() {}

  /** A generated message object: its header and a field (a reference or a primitive) per field. */
  static long objectSize(Descriptor d) {
    return 48 + 8L * d.getFields().size();
  }

  /**
   * The estimate for an answer's frame between the reader and writer index of {@code frame}, as
   * HBase's frame decoder passes it on (its 4-byte length first), or {@link #REFUSED}. {@code
   * responseType} gives the response type of a call id the connection sent, null for another.
   */
  static long of(ByteBuf frame, IntFunction<Descriptor> responseType) {
    int from = frame.readerIndex();
    int to = frame.writerIndex();
    if (to - from < 5) {
      return REFUSED;
    }
    Walk w = new Walk(frame);
    w.at = from + 4;
    int headerLength = w.length(to);
    if (headerLength < 0 || headerLength > MAX_HEADER) {
      return REFUSED;
    }
    ResponseHeader header;
    try {
      header =
          ResponseHeader.parseFrom(
              CodedInputStream.newInstance(frame.nioBuffer(w.at, headerLength)));
    } catch (java.io.IOException e) {
      return REFUSED;
    }
    if (header.hasCellBlockMeta()) {
      return REFUSED;
    }
    w.at += headerLength;
    // every answer ends its call: its id is looked up (and let go) whatever the answer
    Descriptor type = responseType.apply(header.getCallId());
    if (header.hasException()) {
      return to - from; // HBase reads the header alone
    }
    if (type == null) {
      return REFUSED;
    }
    if (w.at == to) {
      return to - from; // no response: HBase reads none either
    }
    int bodyLength = w.length(to);
    if (bodyLength < 0 || w.at + bodyLength != to || !w.message(type, w.at, to, 1)) {
      return REFUSED;
    }
    return (to - from) + objectSize(type) + w.heap;
  }

  /** One walk: a cursor and the heap counted. */
  private static final class Walk {
    private final ByteBuf b;
    int at;
    long heap;
    private java.util.Set<java.nio.ByteBuffer> tables;

    Walk(ByteBuf b) {
      this.b = b;
    }

    /**
     * Walks [from, to) as protobuf parses a message of type {@code d} there; false where its parse
     * would fail (what was counted up to there stays counted: protobuf builds before it fails).
     */
    boolean message(Descriptor d, int from, int to, int depth) {
      if (depth > MAX_DEPTH) {
        return false;
      }
      at = from;
      while (at < to) {
        int tag = varint32(to);
        if (at > to || WireFormat.getTagFieldNumber(tag) == 0) {
          return false;
        }
        int wire = WireFormat.getTagWireType(tag);
        if (wire == WireFormat.WIRETYPE_END_GROUP) {
          return false; // an end of group outside its group
        }
        FieldDescriptor f = d.findFieldByNumber(WireFormat.getTagFieldNumber(tag));
        boolean ok =
            f == null || !fits(f, wire) ? unknown(wire, to, depth) : known(f, wire, to, depth);
        if (!ok) {
          return false;
        }
      }
      return at == to;
    }

    /** Whether protobuf takes a value of wire type {@code wire} as field {@code f}. */
    private static boolean fits(FieldDescriptor f, int wire) {
      if (f.isPackable() && wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        return true; // a packed repeated scalar
      }
      return f.getLiteType().getWireType() == wire;
    }

    private boolean known(FieldDescriptor f, int wire, int to, int depth) {
      if (f.isRepeated()) {
        heap += SLOT;
      }
      if (wire != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        if (f.getJavaType() == FieldDescriptor.JavaType.ENUM) {
          heap += UNKNOWN; // a value the enum lacks is kept as an unknown field
        }
        return skip(wire, to);
      }
      int n = length(to);
      if (n < 0) {
        return false;
      }
      int end = at + n;
      switch (f.getJavaType()) {
        case MESSAGE -> {
          heap += f.isMapField() ? MAP_ENTRY : objectSize(f.getMessageType());
          if (f.getMessageType().getFullName().equals(TABLE_NAME) && !table(at, end)) {
            return false;
          }
          if (!message(f.getMessageType(), at, end, depth + 1)) {
            return false;
          }
        }
        case STRING, BYTE_STRING -> {
          if (n > MAX_VALUE) {
            return false; // a value HBase may parse again, outside this walk
          }
          heap += 48 + 2L * n;
        }
        default -> heap += 24L * n; // packed: at most a value per byte, an unknown enum's boxed
      }
      at = end;
      return true;
    }

    /** Notes a table name's bytes; false past {@link #MAX_TABLES} different ones. */
    private boolean table(int from, int end) {
      if (tables == null) {
        tables = new java.util.HashSet<>();
      }
      byte[] name = new byte[end - from];
      b.getBytes(from, name);
      tables.add(java.nio.ByteBuffer.wrap(name));
      return tables.size() <= MAX_TABLES;
    }

    /** An unknown field: kept whole, a group walked as a nested set of unknown fields. */
    private boolean unknown(int wire, int to, int depth) {
      heap += UNKNOWN;
      if (wire == WireFormat.WIRETYPE_START_GROUP) {
        return group(to, depth + 1);
      }
      if (wire == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
        int n = length(to);
        if (n < 0) {
          return false;
        }
        if (n > MAX_VALUE) {
          return false;
        }
        heap += 48 + n; // a ByteString, not parsed
        at += n;
        return true;
      }
      return skip(wire, to);
    }

    /** An unknown group's fields up to its end tag. */
    private boolean group(int to, int depth) {
      if (depth > MAX_DEPTH) {
        return false;
      }
      while (at < to) {
        int tag = varint32(to);
        if (at > to || WireFormat.getTagFieldNumber(tag) == 0) {
          return false;
        }
        int wire = WireFormat.getTagWireType(tag);
        if (wire == WireFormat.WIRETYPE_END_GROUP) {
          return true;
        }
        if (!unknown(wire, to, depth)) {
          return false;
        }
      }
      return false;
    }

    /**
     * Moves past a varint, fixed64 or fixed32 value; false past {@code to}, or for wire types 6, 7.
     */
    private boolean skip(int wire, int to) {
      switch (wire) {
        case WireFormat.WIRETYPE_VARINT -> {
          for (int n = 0; n < 10; n++) {
            if (at >= to) {
              return false;
            }
            if ((b.getByte(at++) & 0x80) == 0) {
              return true;
            }
          }
          return false; // a varint over 10 bytes: malformed
        }
        case WireFormat.WIRETYPE_FIXED64 -> at += 8;
        case WireFormat.WIRETYPE_FIXED32 -> at += 4;
        default -> {
          return false;
        }
      }
      return at <= to;
    }

    /**
     * A length: protobuf's 32-bit varint, -1 when negative (protobuf refuses it) or past {@code
     * to}.
     */
    int length(int to) {
      int n = varint32(to);
      return at > to || n < 0 || n > to - at ? -1 : n;
    }

    /**
     * Protobuf's 32-bit varint (a tag, a length): up to 10 bytes, the low 32 bits kept. Past {@code
     * to}, or over 10 bytes, {@link #at} is moved past {@code to}.
     */
    int varint32(int to) {
      int v = 0;
      for (int n = 0; n < 10; n++) {
        if (at >= to) {
          at = to + 1;
          return 0;
        }
        int x = b.getByte(at++) & 0xFF;
        if (n < 5) {
          v |= (x & 0x7F) << (7 * n);
        }
        if ((x & 0x80) == 0) {
          return v;
        }
      }
      at = to + 1;
      return 0;
    }
  }
}
