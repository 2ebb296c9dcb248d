package dev.hbase.cache.operator.hbase;

import org.apache.hbase.thirdparty.io.netty.buffer.ByteBuf;

/**
 * An upper estimate of the heap an HBase answer takes once parsed, from its protobuf wire bytes
 * alone, without the schema. Pure.
 *
 * <p>Why: protobuf's Java objects can be a hundred times their wire size. Measured with HBase
 * 2.6.4's classes: a {@code GetClusterStatusResponse} of 1,000,000 empty {@code RegionLoad}s is
 * 2,000,012 bytes on the wire and 188 MiB of heap once parsed (x99). A master that answers so would
 * take the operator past its heap with a 4 MB answer, well under any byte cap a real cluster's
 * answers allow. So before HBase parses an answer, its weight is estimated here and refused above a
 * budget ({@link RpcAnswerCap}).
 *
 * <p>How: the answer is walked as protobuf wire format. Every length-delimited field is tried as a
 * nested message, within {@link #MAX_DEPTH} levels, and counted as one when its bytes are wire
 * format to their end; the fields seen inside count either way. Without the schema a bytes field
 * that happens to read as wire format counts as a message too, so the estimate errs high. The
 * weight is the bytes, plus {@link #PER_FIELD} per field (a repeated or unknown value is an object
 * or a boxed slot), plus {@link #PER_MESSAGE} per message (a generated message object; 188 bytes
 * measured for {@code RegionLoad}, the largest the operator reads in numbers).
 */
final class AnswerWeight {
  static final long PER_FIELD = 24;
  static final long PER_MESSAGE = 256;

  /** Protobuf's own recursion limit: a parse fails deeper than this. */
  static final int MAX_DEPTH = 100;

  private AnswerWeight() {}

  /**
   * What a cell block weighs per byte: HBase decodes it into cell objects of some 40 bytes, each
   * from at least ~20 bytes on the wire.
   */
  static final long PER_CELL_BLOCK_BYTE = 3;

  /**
   * The estimate for an answer's frame, between the reader and writer index of {@code frame}, as
   * HBase's frame decoder passes it on: a 4-byte length, the response header and the response, each
   * length-delimited, then any cell block. The header and the response are walked; the rest is a
   * cell block (or nothing HBase reads).
   */
  static long of(ByteBuf frame) {
    int from = frame.readerIndex();
    int to = frame.writerIndex();
    Walk w = new Walk(frame);
    int at = Math.min(to, from + 4);
    for (int part = 0; part < 2 && at < to; part++) {
      w.at = at;
      long n = w.varint(to);
      if (n < 0 || n > to - w.at) {
        break;
      }
      int start = w.at;
      int end = start + (int) n;
      if (w.message(start, end, 1)) {
        w.messages++;
      }
      at = end;
    }
    return (at - from)
        + (to - at) * PER_CELL_BLOCK_BYTE
        + w.fields * PER_FIELD
        + w.messages * PER_MESSAGE;
  }

  /**
   * One walk. What a nested walk saw counts even when that part then turns out not to be wire
   * format: protobuf too builds the objects before it finds the error, and they are on the heap
   * until it does.
   */
  private static final class Walk {
    private final ByteBuf b;
    int at;
    long fields;
    long messages;

    Walk(ByteBuf b) {
      this.b = b;
    }

    /** Walks [from, to) as a message; false when it is not wire format to its end. */
    boolean message(int from, int to, int depth) {
      at = from;
      while (at < to) {
        long key = varint(to);
        if (key < 0 || (key >>> 3) == 0) {
          return false; // field number 0 is not wire format
        }
        fields++;
        switch ((int) (key & 7)) {
          case 0 -> varint(to); // one past its end: caught below
          case 1 -> at += 8;
          case 5 -> at += 4;
          case 2 -> {
            long n = varint(to);
            if (n < 0 || n > to - at) {
              return false;
            }
            int end = at + (int) n;
            if (depth < MAX_DEPTH && message(at, end, depth + 1)) {
              messages++;
            }
            at = end;
          }
          case 3, 4 -> {} // a group's start or end
          default -> {
            return false;
          }
        }
        if (at > to) {
          return false;
        }
      }
      return true;
    }

    /**
     * The varint at {@link #at}, which moves past it: its value, or -1 when it runs past {@code to}
     * (then {@link #at} is past {@code to} too) or is longer than protobuf's 10 bytes. A value of
     * 2^63 or more reads as -1 too: as a tag or a length it could not fit a frame.
     */
    long varint(int to) {
      long v = 0;
      for (int n = 0; n < 10; n++) {
        if (at >= to) {
          at = to + 1;
          return -1;
        }
        int x = b.getByte(at++) & 0xFF;
        v |= (long) (x & 0x7F) << (7 * n);
        if ((x & 0x80) == 0) {
          return v < 0 ? Long.MAX_VALUE : v;
        }
      }
      at = to + 1;
      return -1;
    }
  }
}
