package floe.jvm;

import org.apache.spark.sql.api.java.UDF0;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * A per-batch constant (a load sequence, a batch time in microseconds) as a function of no
 * argument (floe.runtime.jars.batch_constant).
 *
 * <p>Spark writes a {@code bigint} or {@code timestamp} literal into the Java source it
 * generates for a stage, and reuses a compiled stage only for the same source: a column
 * stamped with {@code lit(<this batch's value>)} made every ingest batch compile its copy
 * stage anew (Janino, then C2 on its hot loop, about a second of CPU on 1M rows). A
 * function object is referenced by the generated code, not written into it, so batches
 * of one feed share one compiled stage. Spark never folds a user function into a literal.
 */
public final class Constant {
  private Constant() {}

  /** The function returning {@code decimal}'s value (text: py4j passes ints by size). */
  public static UDF0<Long> of(String decimal) {
    final long value = Long.parseLong(decimal);
    return () -> value;
  }

  /** {@link #of} as a {@code bigint} user function (Java picks the typed overload). */
  public static UserDefinedFunction udf(String decimal) {
    return functions.udf(of(decimal), DataTypes.LongType);
  }
}
