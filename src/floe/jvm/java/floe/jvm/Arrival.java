package floe.jvm;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.ZoneId;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;

/**
 * The staged envelope's arrival time as Spark's {@code cast(_arrival as timestamp)} reads
 * it, in microseconds (floe.decode.core.read_staged).
 *
 * <p>Kinesis writes one shape, {@code 2022-07-01T00:00:00.000Z}: that shape (one to six
 * fraction digits, or none) is computed here from its digits, which costs a tenth of
 * Spark's general parser, the most expensive expression of copying staged rows into
 * {@code raw.<feed>}. Any other text (another zone, spaces, more fraction digits, a
 * day that does not exist) goes to Spark's own parser, so every answer is the cast's,
 * NULL for what it cannot read.
 */
public final class Arrival {
  private Arrival() {}

  /** The function, for {@code timestamp_micros(...)}; {@code zone}: the session's. */
  public static UDF1<String, Long> udf(String zone) {
    ZoneId zoneId = ZoneId.of(zone);
    return text -> micros(text, zoneId);
  }

  static Long micros(String text, ZoneId zone) {
    if (text == null) {
      return null;
    }
    long fast = canonical(text);
    if (fast != Long.MIN_VALUE) {
      return fast;
    }
    Option<Object> parsed = DateTimeUtils.stringToTimestamp(UTF8String.fromString(text), zone);
    return parsed.isDefined() ? (Long) parsed.get() : null;
  }

  /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,6}]Z} in microseconds, else Long.MIN_VALUE. */
  static long canonical(String s) {
    int n = s.length();
    if (n < 20 || n > 27 || s.charAt(n - 1) != 'Z' || s.charAt(4) != '-' || s.charAt(7) != '-'
        || s.charAt(10) != 'T' || s.charAt(13) != ':' || s.charAt(16) != ':') {
      return Long.MIN_VALUE;
    }
    int year = digits(s, 0, 4);
    int month = digits(s, 5, 2);
    int day = digits(s, 8, 2);
    int hour = digits(s, 11, 2);
    int minute = digits(s, 14, 2);
    int second = digits(s, 17, 2);
    if (year < 0 || month < 0 || day < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59
        || second < 0 || second > 59) {
      return Long.MIN_VALUE;
    }
    long fraction = 0;
    if (n > 20) {
      int width = n - 21; // between the '.' and the 'Z'
      if (s.charAt(19) != '.' || width < 1) {
        return Long.MIN_VALUE;
      }
      int f = digits(s, 20, width);
      if (f < 0) {
        return Long.MIN_VALUE;
      }
      fraction = f;
      for (int i = width; i < 6; i++) {
        fraction *= 10;
      }
    }
    long epochDay;
    try {
      epochDay = LocalDate.of(year, month, day).toEpochDay();
    } catch (DateTimeException e) {
      return Long.MIN_VALUE;
    }
    long seconds = epochDay * 86_400L + hour * 3_600L + minute * 60L + second;
    return seconds * 1_000_000L + fraction;
  }

  /** The ASCII digits s[from, from + count) as a number, or -1. */
  static int digits(String s, int from, int count) {
    int v = 0;
    for (int i = from; i < from + count; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }
}
