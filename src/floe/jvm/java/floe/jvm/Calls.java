package floe.jvm;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.ObjectType;
import scala.collection.JavaConverters;

/**
 * A method of one of floe's function objects, called by Spark's generated code
 * (docs/decisions/0072-jvm-functions-called-in-place.md).
 *
 * <p>A Java {@code UDF1} registered with Spark is called through Spark's user-function
 * wrapper: its argument converted and boxed, a string first copied out as bytes
 * ({@code cast(v as binary)}), the result boxed. Catalyst's {@code Invoke} instead writes
 * a plain method call on the object into the generated code: the object is a reference of
 * the stage (serialized with the plan, one copy per task, as a UDF's is), the arguments
 * are the columns' own Java values ({@code long}, {@code double}, a {@code UTF8String}
 * pointing into the column vector) and a primitive result is used as is.
 */
public final class Calls {
  private Calls() {}

  /**
   * {@code target.method(args...)} as a Column of {@code type}; NULL when any argument is
   * NULL (the method is not called then). The method must be public, take the arguments'
   * Java types ({@code long}, {@code double}, {@code UTF8String}, ...) and return a
   * primitive of {@code type}.
   */
  public static Column invoke(Object target, String method, DataType type, Column... args) {
    Expression object = new Literal(target, new ObjectType(target.getClass()));
    List<Expression> exprs = new ArrayList<>();
    for (Column c : args) {
      exprs.add(c.expr());
    }
    return new Column(
        new Invoke(
            object,
            method,
            type,
            JavaConverters.asScalaBuffer(exprs).toSeq(),
            JavaConverters.asScalaBuffer(new ArrayList<AbstractDataType>()).toSeq(),
            true, // propagateNull: a NULL argument gives NULL without a call
            false, // returnNullable: the method returns a primitive
            true)); // deterministic
  }
}
