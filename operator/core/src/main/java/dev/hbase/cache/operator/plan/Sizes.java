package dev.hbase.cache.operator.plan;

import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;

/** Byte sizes: parsing Kubernetes quantities and printing them the way people read them. */
public final class Sizes {
  public static final long KiB = 1L << 10;
  public static final long MiB = 1L << 20;
  public static final long GiB = 1L << 30;

  private Sizes() {}

  /** Bytes of a Kubernetes quantity ("16Gi", "512M", "1e9"); null stays null. */
  public static Long bytes(Quantity q) {
    if (q == null) {
      return null;
    }
    return Quantity.getAmountInBytes(q).setScale(0, RoundingMode.CEILING).longValueExact();
  }

  public static long parse(String quantity) {
    return Quantity.getAmountInBytes(new Quantity(quantity))
        .setScale(0, RoundingMode.CEILING)
        .longValueExact();
  }

  /** A Kubernetes quantity for bytes: whole Gi or Mi when exact, else Mi rounded up. */
  public static String quantity(long bytes) {
    if (bytes == 0) {
      return "0";
    }
    if (bytes % GiB == 0) {
      return bytes / GiB + "Gi";
    }
    return ceilDiv(bytes, MiB) + "Mi";
  }

  /** Human-readable, for messages: 1.5Gi, 384Mi. */
  public static String human(long bytes) {
    if (bytes >= GiB) {
      BigDecimal g =
          BigDecimal.valueOf(bytes).divide(BigDecimal.valueOf(GiB), 1, RoundingMode.HALF_UP);
      return g.stripTrailingZeros().toPlainString() + "Gi";
    }
    if (bytes >= MiB) {
      return Math.round((double) bytes / MiB) + "Mi";
    }
    return bytes + "B";
  }

  public static long floorMiB(long bytes) {
    return bytes / MiB * MiB;
  }

  public static long ceilGiB(long bytes) {
    return ceilDiv(bytes, GiB) * GiB;
  }

  public static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  public static long clamp(long v, long min, long max) {
    return Math.max(min, Math.min(max, v));
  }
}
