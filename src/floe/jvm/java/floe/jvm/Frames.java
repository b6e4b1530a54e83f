package floe.jvm;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.execution.LogicalRDD;
import scala.Option;
import scala.math.BigInt;

/**
 * Frames whose statistics Python cannot set: py4j turns every {@code scala.math.BigInt}
 * it sees into a Python int, so a {@code Statistics} cannot be built across it.
 */
public final class Frames {
  private Frames() {}

  /**
   * {@code frame} (a checkpoint: a bare {@code LogicalRDD}) with {@code bytes} as its size
   * estimate instead of the estimate of the plan it computed (floe.runtime.views); any
   * other frame as it is.
   */
  public static Dataset<Row> sized(Dataset<Row> frame, long bytes) {
    LogicalPlan plan = frame.logicalPlan();
    if (!(plan instanceof LogicalRDD)) {
      return frame;
    }
    LogicalRDD rows = (LogicalRDD) plan;
    Statistics stats =
        new Statistics(
            BigInt.apply(Math.max(bytes, 1L)), Option.empty(), Statistics.apply$default$3(), false);
    LogicalRDD sized =
        rows.copy(
            rows.output(),
            rows.rdd(),
            rows.outputPartitioning(),
            rows.outputOrdering(),
            rows.isStreaming(),
            frame.sparkSession(),
            Option.apply(stats),
            Option.apply(rows.constraints()));
    return Dataset.ofRows(frame.sparkSession(), sized);
  }
}
