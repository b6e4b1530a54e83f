package floe.jvm;

import java.io.Serializable;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code length(v)} of a string, as Spark answers it ({@code UTF8String.numChars}), with an
 * ASCII fast path: eight bytes tested at a time, and an ASCII value's length is its byte
 * count. Spark's own count steps through the value byte by byte, through a table of UTF-8
 * lead bytes; any value with a byte above 0x7F still takes it, so every answer is Spark's
 * (docs/decisions/0072-jvm-functions-called-in-place.md).
 */
public final class Text implements Serializable {
  private static final long serialVersionUID = 1L;

  /** {@code length(value)} (a string column): NULL for NULL. */
  public static Column length(Column value) {
    return Calls.invoke(new Text(), "chars", DataTypes.IntegerType, value.cast(DataTypes.StringType));
  }

  public int chars(UTF8String s) {
    int n = s.numBytes();
    return ascii(s.getBaseObject(), s.getBaseOffset(), n) ? n : s.numChars();
  }

  private static final boolean UNALIGNED = Platform.unaligned();

  /** Whether the n bytes at {@code base + off} are all ASCII (below 0x80). */
  static boolean ascii(Object base, long off, int n) {
    int i = 0;
    if (UNALIGNED) {
      for (; i + 8 <= n; i += 8) {
        if ((Platform.getLong(base, off + i) & 0x8080808080808080L) != 0) {
          return false;
        }
      }
    }
    for (; i < n; i++) {
      if (Platform.getByte(base, off + i) < 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return "floe_length";
  }

  // Stateless, so all equal: two lengths of one column are one expression to Spark.
  @Override
  public boolean equals(Object other) {
    return other instanceof Text;
  }

  @Override
  public int hashCode() {
    return Text.class.hashCode();
  }
}
