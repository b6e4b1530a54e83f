package floe.jvm;

import java.nio.ByteBuffer;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.AccumulatorV2;

/**
 * A check run's sketch (HyperLogLog++ registers or a logarithmic histogram) filled by the
 * scan aggregation's own read (docs/decisions/0071-sketches-ride-on-the-scan.md).
 *
 * <p>floe computed each sketch as a code-generated groupBy of its column: a second read of
 * the column, a hash aggregation and a shuffle. Here the scan aggregation calls a function
 * of this accumulator on every row instead ({@link #column}): each task fills one state in
 * primitive arrays, and the driver merges the tasks' states when they finish. The state is
 * exactly what the groupBy computed, row for row:
 *
 * <ul>
 *   <li>{@code registers}: the input is {@code xxhash64} of the (normalized) value, as
 *       Spark's HyperLogLog++ hashes it; the state is, per register {@code x >>> (64 - p)},
 *       the least {@code w = ((x << p) | 2^(p-1)) >>> 1} (floe.quality.analyzers).
 *   <li>{@code histogram}: the input is the value as a double; its bucket is the groupBy's
 *       ({@code floor(StrictMath.log(|v|) * perLn)} offset by sign, NaN and the
 *       infinities apart), and the state is, per bucket, the count and the least and
 *       greatest value under Spark's ordering of doubles ({@code -0.0 == 0.0}).
 * </ul>
 *
 * <p>The driver merges each partition's state once, as its task finishes: a partition
 * computed again (a task retried, a stage re-run) is not added a second time, and the
 * driver holds one merged state whatever the number of partitions. The caller
 * reconciles {@link #count} with a count the same aggregation computes, and a function
 * evaluated outside any task (a plan folded on the driver) is flagged by
 * {@link #driverEvaluated}; either way the caller falls back to the groupBy.
 */
public final class SketchAccumulator extends AccumulatorV2<Object, byte[]> {
  private static final long serialVersionUID = 1L;

  public static final int REGISTERS = 0;
  public static final int HISTOGRAM = 1;

  static final long LONG_MAX = Long.MAX_VALUE;

  private final int kind;
  private final int p;
  private final double perLn;
  private final long offset;

  // A task's copy: its partition and state (serialized back to the driver).
  private int partition = -1;
  private State state;
  // The driver's: the partitions merged so far, and their merged state.
  private final java.util.HashSet<Integer> seen = new java.util.HashSet<>();
  private State merged;
  private volatile boolean onDriver;
  // locate's view of the merged histogram: its buckets sorted, and the rows before each.
  private transient long[][] sorted;
  private transient long[] sortedBefore;

  private SketchAccumulator(int kind, int p, double perLn, long offset) {
    this.kind = kind;
    this.p = p;
    this.perLn = perLn;
    this.offset = offset;
  }

  /** HyperLogLog++ registers of precision {@code p}, registered with {@code spark}'s context. */
  public static SketchAccumulator registers(org.apache.spark.sql.SparkSession spark, int p) {
    SketchAccumulator acc = new SketchAccumulator(REGISTERS, p, 0.0, 0L);
    spark.sparkContext().register(acc);
    return acc;
  }

  /** A histogram of {@code perLn} buckets per unit of ln|v|, positive ones from {@code offset}. */
  public static SketchAccumulator histogram(
      org.apache.spark.sql.SparkSession spark, int perLn, String offset) {
    SketchAccumulator acc =
        new SketchAccumulator(HISTOGRAM, 0, (double) perLn, Long.parseLong(offset));
    spark.sparkContext().register(acc);
    return acc;
  }

  /**
   * The aggregation's call that fills this sketch: {@code input} is the row's hash
   * ({@code registers}, a bigint) or value ({@code histogram}, a double), NULL for a row
   * the sketch does not read. Generated code calls {@link Feeder} on the primitive value
   * (docs/decisions/0072-jvm-functions-called-in-place.md); the column is always false or
   * NULL, so the aggregation keeps it under a {@code max}. Deterministic, so Spark accepts
   * it inside an aggregate; a plan that evaluates it elsewhere than once per row in the
   * tasks is caught by the caller's reconciliation.
   */
  public Column column(Column input) {
    return Calls.invoke(new Feeder(this), kind == REGISTERS ? "hash" : "value",
        DataTypes.BooleanType, input);
  }

  /** What generated code calls: the task's copy of the accumulator, fed one value. */
  public static final class Feeder implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final SketchAccumulator acc;

    Feeder(SketchAccumulator acc) {
      this.acc = acc;
    }

    public boolean hash(long x) {
      acc.addHash(x);
      return false;
    }

    public boolean value(double v) {
      acc.addValue(v);
      return false;
    }

    @Override
    public String toString() {
      return acc.kind == REGISTERS ? "floe_sketch_registers" : "floe_sketch_histogram";
    }
  }

  private State newState() {
    return kind == REGISTERS ? State.registers(p) : State.histogram();
  }

  private State state() {
    if (state == null) {
      TaskContext task = TaskContext.get();
      if (task == null) {
        onDriver = true;
        return null;
      }
      partition = task.partitionId();
      state = newState();
    }
    return state;
  }

  void addHash(long x) {
    State s = state();
    if (s != null) {
      s.addHash(x, p);
    }
  }

  void addValue(double v) {
    State s = state();
    if (s != null) {
      s.addBucket(bucket(v), v);
    }
  }

  long bucket(double v) {
    if (Double.isNaN(v)) {
      return LONG_MAX; // NaN sorts last, as percentile_approx has it
    }
    if (v == Double.POSITIVE_INFINITY) {
      return LONG_MAX - 1;
    }
    if (v == Double.NEGATIVE_INFINITY) {
      return -LONG_MAX;
    }
    if (v > 0) {
      return offset + (long) Math.floor(StrictMath.log(v) * perLn);
    }
    if (v < 0) {
      return -offset - (long) Math.floor(StrictMath.log(-v) * perLn);
    }
    return 0L;
  }

  /** Whether the function ran outside a task (its rows then counted nowhere). */
  public boolean driverEvaluated() {
    return onDriver;
  }

  /** Rows the merged partitions read. */
  public synchronized long count() {
    return merged == null ? 0L : merged.rows;
  }

  /**
   * HyperLogLog++'s estimate of the merged registers, by Spark's own code
   * ({@code HyperLogLogPlusPlusHelper.query}, relative standard deviation {@code rsd}):
   * the registers packed into its words (six bits a register, ten a word) as
   * {@code approx_count_distinct}'s buffer holds them.
   */
  public synchronized long estimate(double rsd) {
    org.apache.spark.sql.catalyst.util.HyperLogLogPlusPlusHelper helper =
        new org.apache.spark.sql.catalyst.util.HyperLogLogPlusPlusHelper(rsd);
    Object[] words = new Object[helper.numWords()];
    long[] packed = new long[words.length];
    if (merged != null) {
      for (int r = 0; r < merged.least.length; r++) {
        long w = merged.least[r];
        if (w >= 0) {
          packed[r / 10] |= ((long) Long.numberOfLeadingZeros(w)) << (6 * (r % 10));
        }
      }
    }
    for (int i = 0; i < words.length; i++) {
      words[i] = packed[i];
    }
    return helper.query(new org.apache.spark.sql.catalyst.expressions.GenericInternalRow(words), 0);
  }

  /**
   * {@link #value} in Base64: py4j hands a string to Python as one piece, where it decodes
   * a {@code byte[]} value by value (0.07 s for a histogram of ten thousand buckets).
   */
  public String encoded() {
    return java.util.Base64.getEncoder().encodeToString(value());
  }

  /**
   * The histogram bucket that holds rank {@code rank} (1 to {@link #count}) of the merged
   * values in bucket order, as four longs in hex, comma-separated: the rows in the buckets
   * before it, its count, and its least and greatest value's bits. A quantile needs one
   * bucket and the two ends, so it asks for three instead of taking every bucket through
   * py4j (ten thousand buckets are 0.05 s of string transfer); "" for a rank beyond the
   * rows. The buckets are sorted once per merged state.
   */
  public synchronized String locate(long rank) {
    if (merged == null || rank < 1 || rank > merged.rows) {
      return "";
    }
    if (sorted == null) {
      long[][] rowsOf = new long[merged.size][];
      int[] n = {0};
      merged.forEach(
          (bucket, count, low, high) ->
              rowsOf[n[0]++] =
                  new long[] {
                    bucket, count, Double.doubleToRawLongBits(low), Double.doubleToRawLongBits(high)
                  });
      java.util.Arrays.sort(rowsOf, (a, b) -> Long.compare(a[0], b[0]));
      long[] before = new long[rowsOf.length];
      for (int i = 1; i < rowsOf.length; i++) {
        before[i] = before[i - 1] + rowsOf[i - 1][1];
      }
      sorted = rowsOf;
      sortedBefore = before;
    }
    // The last bucket whose rows before it are fewer than the rank.
    int lo = 0;
    int hi = sorted.length - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (sortedBefore[mid] < rank) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    long[] b = sorted[lo];
    return Long.toHexString(sortedBefore[lo]) + "," + Long.toHexString(b[1]) + ","
        + Long.toHexString(b[2]) + "," + Long.toHexString(b[3]);
  }

  /**
   * The merged state as bytes (big-endian): for registers, (register int, least w long)
   * per register that saw a row; for a histogram, (bucket long, count long, least double,
   * greatest double) per bucket.
   */
  @Override
  public synchronized byte[] value() {
    if (merged == null) {
      return new byte[0];
    }
    if (kind == REGISTERS) {
      int present = 0;
      for (long w : merged.least) {
        present += w >= 0 ? 1 : 0;
      }
      ByteBuffer out = ByteBuffer.allocate(present * 12);
      for (int r = 0; r < merged.least.length; r++) {
        if (merged.least[r] >= 0) {
          out.putInt(r).putLong(merged.least[r]);
        }
      }
      return out.array();
    }
    ByteBuffer out = ByteBuffer.allocate(merged.size * 32);
    merged.forEach(
        (bucket, count, low, high) ->
            out.putLong(bucket).putLong(count).putDouble(low).putDouble(high));
    return out.array();
  }

  @Override
  public synchronized boolean isZero() {
    return state == null && !onDriver && merged == null;
  }

  @Override
  public AccumulatorV2<Object, byte[]> copy() {
    // Spark copies an accumulator to send it to the tasks (copyAndReset): the copy starts
    // empty, and the driver's merged state stays with the driver's object.
    return new SketchAccumulator(kind, p, perLn, offset);
  }

  @Override
  public synchronized void reset() {
    partition = -1;
    state = null;
    seen.clear();
    merged = null;
    sorted = null;
    sortedBefore = null;
    onDriver = false;
  }

  @Override
  public void add(Object v) {
    throw new UnsupportedOperationException("a sketch is filled through its column()");
  }

  @Override
  public synchronized void merge(AccumulatorV2<Object, byte[]> other) {
    SketchAccumulator o = (SketchAccumulator) other;
    onDriver |= o.onDriver;
    if (o.state == null || !seen.add(o.partition)) {
      return; // nothing read, or a partition computed again: merged once already
    }
    if (merged == null) {
      merged = newState();
    }
    merged.mergeFrom(o.state);
    sorted = null;
    sortedBefore = null;
  }

  /**
   * One task's registers or histogram, in primitive arrays. A histogram is an open-
   * addressing table of four longs per bucket (bucket, count, least and greatest value's
   * bits), so a row touches one cache line.
   */
  static final class State implements java.io.Serializable {
    private static final long serialVersionUID = 1L;

    long rows;
    // registers: the least w per register (-1: none).
    long[] least;
    // histogram: slot i at table[4 i .. 4 i + 3]; count 0 is an empty slot.
    long[] table;
    int size;

    static State registers(int p) {
      State s = new State();
      s.least = new long[1 << p];
      java.util.Arrays.fill(s.least, -1L);
      return s;
    }

    static State histogram() {
      State s = new State();
      s.table = new long[4 * 1024];
      return s;
    }

    void addHash(long x, int p) {
      rows++;
      int r = (int) (x >>> (64 - p));
      long w = ((x << p) | (1L << (p - 1))) >>> 1;
      long l = least[r];
      if (l < 0 || w < l) {
        least[r] = w;
      }
    }

    void addBucket(long bucket, double v) {
      addBucket(bucket, 1L, v, v);
    }

    void addBucket(long bucket, long count, double low, double high) {
      rows += count;
      long[] t = table;
      int i = slot(t, bucket);
      if (t[i + 1] == 0) {
        t[i] = bucket;
        t[i + 1] = count;
        t[i + 2] = Double.doubleToRawLongBits(low);
        t[i + 3] = Double.doubleToRawLongBits(high);
        if (++size * 2 > t.length / 4) {
          grow();
        }
        return;
      }
      t[i + 1] += count;
      if (compare(low, Double.longBitsToDouble(t[i + 2])) < 0) {
        t[i + 2] = Double.doubleToRawLongBits(low);
      }
      if (compare(high, Double.longBitsToDouble(t[i + 3])) > 0) {
        t[i + 3] = Double.doubleToRawLongBits(high);
      }
    }

    /** The slot (its first index in {@code t}) holding {@code bucket}, or the empty one for it. */
    static int slot(long[] t, long bucket) {
      int mask = t.length / 4 - 1;
      long h = bucket * 0x9E3779B97F4A7C15L;
      int i = (int) (h ^ (h >>> 29)) & mask;
      while (t[4 * i + 1] != 0 && t[4 * i] != bucket) {
        i = (i + 1) & mask;
      }
      return 4 * i;
    }

    private void grow() {
      long[] old = table;
      long[] t = new long[old.length * 2];
      for (int j = 0; j < old.length; j += 4) {
        if (old[j + 1] != 0) {
          int i = slot(t, old[j]);
          System.arraycopy(old, j, t, i, 4);
        }
      }
      table = t;
    }

    /** Adds {@code other}'s rows: the least of each register, or each bucket. */
    void mergeFrom(State other) {
      if (least != null) {
        rows += other.rows;
        for (int r = 0; r < least.length; r++) {
          long w = other.least[r];
          if (w >= 0 && (least[r] < 0 || w < least[r])) {
            least[r] = w;
          }
        }
      } else {
        other.forEach(this::addBucket);
      }
    }

    /** Every bucket: (bucket, count, least, greatest), in table order. */
    void forEach(BucketVisitor visit) {
      for (int j = 0; j < table.length; j += 4) {
        if (table[j + 1] != 0) {
          visit.bucket(
              table[j],
              table[j + 1],
              Double.longBitsToDouble(table[j + 2]),
              Double.longBitsToDouble(table[j + 3]));
        }
      }
    }

    /** Spark's ordering of doubles (SQLOrderingUtil.compareDoubles): -0.0 equals 0.0. */
    static int compare(double x, double y) {
      return x == y ? 0 : Double.compare(x, y);
    }
  }

  interface BucketVisitor {
    void bucket(long bucket, long count, double low, double high);
  }
}
