package floe.jvm;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * JSON Schema payloads on the JVM fast path (docs/decisions/0058-jvm-decoder-fast-path.md).
 *
 * <p>A version is eligible when its schema uses only a subset whose meaning is plain: one
 * {@code type} per node (object, string, integer, boolean), {@code properties},
 * {@code required}, a boolean {@code additionalProperties}, string {@code enum}s, numeric
 * {@code minimum}/{@code maximum}, and annotations. Anything else ({@code default}, which
 * fastjsonschema writes into the record; {@code $ref}; unions; arrays; patterns; numbers)
 * leaves the version to Python. A payload is taken only when it is strict UTF-8 JSON that
 * the version accepts and whose every value lands in its column exactly as orjson + Arrow
 * would put it there; any other payload is a doubt, and the Python decoder, which alone
 * names errors, decodes it. So: a doubt never needs to be right, only a row does.
 */
final class JsonPlan {
  private JsonPlan() {}

  enum Kind {
    OBJECT,
    STRING,
    INTEGER,
    BOOLEAN
  }

  /** Keywords fastjsonschema (formats off) neither checks nor acts on. */
  static final Set<String> ANNOTATIONS =
      Set.of("$schema", "$id", "$comment", "title", "description", "examples", "format",
          "readOnly", "writeOnly", "deprecated");

  /** One node of an eligible schema. */
  static final class Node {
    final Kind kind;
    final Map<String, Node> properties = new HashMap<>();
    final Set<String> required = new HashSet<>();
    final boolean additional;
    final Set<String> enumValues;
    final BigDecimal minimum;
    final BigDecimal maximum;

    Node(Kind kind, boolean additional, Set<String> enumValues, BigDecimal minimum,
        BigDecimal maximum) {
      this.kind = kind;
      this.additional = additional;
      this.enumValues = enumValues;
      this.minimum = minimum;
      this.maximum = maximum;
    }
  }

  /** The root node of an eligible version schema (an object), or Ineligible. */
  static Node of(JsonNode schema) throws StageDecode.Plan.Ineligible {
    Node root = node(schema, 0);
    if (root.kind != Kind.OBJECT) {
      throw new StageDecode.Plan.Ineligible("root is not an object");
    }
    return root;
  }

  static Node node(JsonNode s, int depth) throws StageDecode.Plan.Ineligible {
    if (!s.isObject() || depth > 32) {
      throw new StageDecode.Plan.Ineligible("not a plain schema object");
    }
    Iterator<String> names = s.fieldNames();
    while (names.hasNext()) {
      String k = names.next();
      if (!ANNOTATIONS.contains(k) && !k.equals("type") && !k.equals("properties")
          && !k.equals("required") && !k.equals("additionalProperties") && !k.equals("enum")
          && !k.equals("minimum") && !k.equals("maximum")) {
        throw new StageDecode.Plan.Ineligible("keyword " + k);
      }
    }
    JsonNode type = s.get("type");
    if (type == null || !type.isTextual()) {
      throw new StageDecode.Plan.Ineligible("no single type");
    }
    Kind kind;
    switch (type.asText()) {
      case "object": kind = Kind.OBJECT; break;
      case "string": kind = Kind.STRING; break;
      case "integer": kind = Kind.INTEGER; break;
      case "boolean": kind = Kind.BOOLEAN; break;
      default: throw new StageDecode.Plan.Ineligible("type " + type.asText());
    }
    JsonNode extra = s.get("additionalProperties");
    if (extra != null && !extra.isBoolean()) {
      throw new StageDecode.Plan.Ineligible("additionalProperties schema");
    }
    Set<String> enumValues = null;
    JsonNode e = s.get("enum");
    if (e != null) {
      if (kind != Kind.STRING || !e.isArray()) {
        throw new StageDecode.Plan.Ineligible("enum");
      }
      enumValues = new HashSet<>();
      for (JsonNode v : e) {
        if (!v.isTextual()) {
          throw new StageDecode.Plan.Ineligible("enum value");
        }
        enumValues.add(v.asText());
      }
    }
    Node n = new Node(kind, extra == null || extra.asBoolean(), enumValues,
        bound(s.get("minimum")), bound(s.get("maximum")));
    JsonNode props = s.get("properties");
    if (props != null) {
      if (!props.isObject()) {
        throw new StageDecode.Plan.Ineligible("properties");
      }
      Iterator<Map.Entry<String, JsonNode>> it = props.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> p = it.next();
        n.properties.put(p.getKey(), node(p.getValue(), depth + 1));
      }
    }
    JsonNode req = s.get("required");
    if (req != null) {
      if (!req.isArray()) {
        throw new StageDecode.Plan.Ineligible("required");
      }
      for (JsonNode r : req) {
        if (!r.isTextual()) {
          throw new StageDecode.Plan.Ineligible("required name");
        }
        n.required.add(r.asText());
      }
    }
    return n;
  }

  static BigDecimal bound(JsonNode v) throws StageDecode.Plan.Ineligible {
    if (v == null) {
      return null;
    }
    if (!v.isNumber() || !(v.isIntegralNumber() || Double.isFinite(v.asDouble()))) {
      throw new StageDecode.Plan.Ineligible("bound");
    }
    return v.isIntegralNumber() ? new BigDecimal(v.bigIntegerValue()) : new BigDecimal(v.asDouble());
  }

  /** Reads payloads of one eligible version into rows of the table's record type. */
  static final class Reader {
    final Node root;
    final StructType target;
    final int maxDepth;

    Reader(Node root, StructType target, int maxDepth) throws StageDecode.Plan.Ineligible {
      index(target);
      this.root = root;
      this.target = target;
      this.maxDepth = Math.min(maxDepth, 512);
    }

    /**
     * Column slot by name of every struct in the target, made once: the reader is shared
     * by the tasks of an executor, so the map is only read after the constructor.
     */
    private final Map<StructType, Map<String, Integer>> slotsByStruct = new IdentityHashMap<>();

    /** Indexes every struct of the target; Ineligible when one repeats a name (Arrow
     * would take one of them). */
    private void index(StructType struct) throws StageDecode.Plan.Ineligible {
      Map<String, Integer> slots = new HashMap<>();
      StructField[] fields = struct.fields();
      for (int i = 0; i < fields.length; i++) {
        if (slots.putIfAbsent(fields[i].name(), i) != null) {
          throw new StageDecode.Plan.Ineligible("repeated field " + fields[i].name());
        }
        if (fields[i].dataType() instanceof StructType) {
          index((StructType) fields[i].dataType());
        }
      }
      slotsByStruct.put(struct, slots);
    }

    /** The record of a payload, or a doubt. */
    InternalRow read(byte[] b, int from, int n) throws StageDecode.Doubt, IOException {
      StageDecode.Utf8.requireObjectText(b, from, n);
      try (JsonParser p = StageDecode.Decoder.JSON.createParser(b, from, n)) {
        Object row = value(p, p.nextToken(), root, target, 0);
        if (p.nextToken() != null) {
          throw StageDecode.Doubt.INSTANCE;
        }
        return (InternalRow) row;
      }
    }

    /**
     * The value at token {@code t}: checked against {@code node} (null: any value, a member
     * the schema does not name) and converted to {@code type} (null: no column takes it).
     */
    Object value(JsonParser p, JsonToken t, Node node, DataType type, int depth)
        throws StageDecode.Doubt, IOException {
      if (t == null) {
        throw StageDecode.Doubt.INSTANCE;
      }
      switch (t) {
        case START_OBJECT:
          return object(p, node, type, depth + 1);
        case START_ARRAY:
          if (node != null || type != null || depth + 1 > maxDepth) {
            throw StageDecode.Doubt.INSTANCE;
          }
          for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
            value(p, e, null, null, depth + 1);
          }
          return null;
        case VALUE_STRING: {
          String s = StageDecode.Utf8.noSurrogates(p.getText());
          if (node != null && (node.kind != Kind.STRING
              || (node.enumValues != null && !node.enumValues.contains(s)))) {
            throw StageDecode.Doubt.INSTANCE;
          }
          if (type == null) {
            return null;
          }
          if (!(type instanceof StringType)) {
            throw StageDecode.Doubt.INSTANCE;
          }
          return UTF8String.fromString(s);
        }
        case VALUE_NUMBER_INT: {
          if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw StageDecode.Doubt.INSTANCE; // orjson makes a float or a big int of it
          }
          long v = p.getLongValue();
          if (node != null) {
            if (node.kind != Kind.INTEGER) {
              throw StageDecode.Doubt.INSTANCE;
            }
            if (node.minimum != null || node.maximum != null) {
              BigDecimal d = BigDecimal.valueOf(v);
              if ((node.minimum != null && d.compareTo(node.minimum) < 0)
                  || (node.maximum != null && d.compareTo(node.maximum) > 0)) {
                throw StageDecode.Doubt.INSTANCE;
              }
            }
          }
          if (type == null) {
            return null;
          }
          if (!(type instanceof LongType)) {
            throw StageDecode.Doubt.INSTANCE;
          }
          return v;
        }
        case VALUE_NUMBER_FLOAT:
          if (node != null || type != null || !Double.isFinite(p.getDoubleValue())) {
            throw StageDecode.Doubt.INSTANCE;
          }
          return null;
        case VALUE_TRUE:
        case VALUE_FALSE:
          if (node != null && node.kind != Kind.BOOLEAN) {
            throw StageDecode.Doubt.INSTANCE;
          }
          if (type == null) {
            return null;
          }
          if (!(type instanceof BooleanType)) {
            throw StageDecode.Doubt.INSTANCE;
          }
          return t == JsonToken.VALUE_TRUE;
        case VALUE_NULL:
          if (node != null) {
            throw StageDecode.Doubt.INSTANCE; // no eligible node admits null
          }
          return null;
        default:
          throw StageDecode.Doubt.INSTANCE;
      }
    }

    Object object(JsonParser p, Node node, DataType type, int depth)
        throws StageDecode.Doubt, IOException {
      if (depth > maxDepth || (node != null && node.kind != Kind.OBJECT)
          || (type != null && !(type instanceof StructType))) {
        throw StageDecode.Doubt.INSTANCE;
      }
      StructType struct = (StructType) type;
      Map<String, Integer> slots = struct == null ? null : slotsByStruct.get(struct);
      GenericInternalRow row = struct == null ? null : new GenericInternalRow(struct.fields().length);
      // Members seen: a column's by its slot, any other name in a set made when one comes.
      boolean[] filled = struct == null ? null : new boolean[struct.fields().length];
      Set<String> others = null;
      JsonToken t = p.nextToken();
      for (; t == JsonToken.FIELD_NAME; t = p.nextToken()) {
        String name = StageDecode.Utf8.noSurrogates(p.getCurrentName());
        Integer at = slots == null ? null : slots.get(name);
        int slot = at == null ? -1 : at;
        if (slot >= 0) {
          if (filled[slot]) {
            throw StageDecode.Doubt.INSTANCE; // orjson keeps the last: leave it to it
          }
          filled[slot] = true;
        } else {
          if (others == null) {
            others = new HashSet<>();
          }
          if (!others.add(name)) {
            throw StageDecode.Doubt.INSTANCE; // orjson keeps the last: leave it to it
          }
        }
        Node child = null;
        if (node != null) {
          child = node.properties.get(name);
          if (child == null && !node.additional) {
            throw StageDecode.Doubt.INSTANCE;
          }
        }
        Object v = value(p, p.nextToken(), child,
            slot >= 0 ? struct.fields()[slot].dataType() : null, depth);
        if (slot >= 0) {
          row.update(slot, v);
        }
      }
      if (t != JsonToken.END_OBJECT) {
        throw StageDecode.Doubt.INSTANCE;
      }
      if (node != null) {
        for (String name : node.required) {
          Integer at = slots == null ? null : slots.get(name);
          boolean seen = at != null ? filled[at] : others != null && others.contains(name);
          if (!seen) {
            throw StageDecode.Doubt.INSTANCE;
          }
        }
      }
      return row;
    }
  }
}
