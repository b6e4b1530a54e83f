package floe.jvm;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.apache.avro.Schema;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayBasedMapData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.CollectionAccumulator;

/**
 * The JVM fast path of floe's stream decode (docs/decisions/0058-jvm-decoder-fast-path.md).
 *
 * <p>It reads the same pieces as the Python workers (floe.decode.core.plan_tasks), splits
 * lines with the same rules, and decodes a line itself only when it is sure of the result:
 * a well-formed Kinesis envelope with string fields, strict base64, a Glue header naming a
 * version the driver declared eligible (Avro, a shape this decoder reads exactly as
 * fastavro + Arrow would; or JSON Schema, a subset read by {@link JsonPlan}), a payload
 * consumed to its last byte. Every other line — every
 * error, every doubt — is written to a fallback file and decoded by the Python decoder,
 * which alone decides quarantine codes and details. So the staged rows are the Python
 * decoder's rows, bit for bit (tests/decode/test_jvm_equivalence.py).
 */
public final class StageDecode {
  private StageDecode() {}

  static final int HASH_BLOCK = 8 * 1024 * 1024;
  static final int RAW_KEEP = 4096; // bytes of a fallback line Python may need (RAW_PREFIX * 4)
  static final String WHILE_READ = "while it was read";
  static final int MAX_ENVELOPE_DEPTH = 64;

  /**
   * Decode the tasks' pieces; good rows are written as Parquet under {@code outDir}, lines
   * for the Python decoder as files under {@code fallbackDir}. Returns one JSON object per
   * piece: its counts over the lines decoded here.
   */
  public static String[] stage(
      SparkSession spark,
      String tasksJson,
      String versionsJson,
      String outputSchemaJson,
      long maxLine,
      long maxRecord,
      long maxInflated,
      int maxDepth,
      String outDir,
      String fallbackDir)
      throws IOException {
    ObjectMapper mapper = new ObjectMapper();
    JsonNode tasks = mapper.readTree(tasksJson);
    List<String> taskTexts = new ArrayList<>();
    for (JsonNode task : tasks) {
      taskTexts.add(mapper.writeValueAsString(task));
    }
    StructType output = (StructType) DataType.fromJson(outputSchemaJson);
    CollectionAccumulator<String> counts =
        spark.sparkContext().collectionAccumulator("floe.decode.counts");
    Limits limits = new Limits(maxLine, maxRecord, maxInflated, maxDepth);
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    JavaRDD<String> rdd = jsc.parallelize(taskTexts, Math.max(1, taskTexts.size()));
    TaskFunction fn =
        new TaskFunction(versionsJson, outputSchemaJson, limits, fallbackDir, counts);
    JavaRDD<InternalRow> rows = rdd.mapPartitions(fn);
    Dataset<Row> df = spark.internalCreateDataFrame(rows.rdd(), output, false);
    // No dictionary encoding: the staged files are read once, by the copy into the raw
    // table, and dictionary look-ups were a fifth of the decode's CPU time; the files are
    // about twice as large (docs/decisions/0065-staging-and-arrival-times.md).
    df.write().mode(SaveMode.Overwrite).option("parquet.enable.dictionary", "false")
        .parquet(outDir);
    List<String> value = counts.value();
    return value.toArray(new String[0]);
  }

  // ------------------------------------------------------------------------------ tasks

  static final class Limits implements java.io.Serializable {
    final long maxLine;
    final long maxRecord;
    final long maxInflated;
    final long maxBase64;
    final int maxDepth;

    Limits(long maxLine, long maxRecord, long maxInflated, int maxDepth) {
      this.maxLine = maxLine;
      this.maxRecord = maxRecord;
      this.maxInflated = maxInflated;
      this.maxDepth = maxDepth;
      this.maxBase64 = (maxRecord + 2) / 3 * 4;
    }
  }

  static final class TaskFunction implements FlatMapFunction<Iterator<String>, InternalRow> {
    final String versionsJson;
    final String outputSchemaJson;
    final Limits limits;
    final String fallbackDir;
    final CollectionAccumulator<String> counts;

    TaskFunction(
        String versionsJson,
        String outputSchemaJson,
        Limits limits,
        String fallbackDir,
        CollectionAccumulator<String> counts) {
      this.versionsJson = versionsJson;
      this.outputSchemaJson = outputSchemaJson;
      this.limits = limits;
      this.fallbackDir = fallbackDir;
      this.counts = counts;
    }

    @Override
    public Iterator<InternalRow> call(Iterator<String> tasks) throws Exception {
      Decoder decoder = Decoder.get(versionsJson, outputSchemaJson, limits);
      List<JsonNode> pieces = new ArrayList<>();
      ObjectMapper mapper = new ObjectMapper();
      while (tasks.hasNext()) {
        for (JsonNode piece : mapper.readTree(tasks.next())) {
          pieces.add(piece);
        }
      }
      return new PieceRows(pieces, decoder, fallbackDir, counts);
    }
  }

  /** The rows of a task's pieces, one piece read at a time. */
  static final class PieceRows implements Iterator<InternalRow> {
    final List<JsonNode> pieces;
    final Decoder decoder;
    final String fallbackDir;
    final CollectionAccumulator<String> counts;
    String part;
    int next = 0;
    Piece current;
    InternalRow ready;

    PieceRows(
        List<JsonNode> pieces,
        Decoder decoder,
        String fallbackDir,
        CollectionAccumulator<String> counts) {
      this.pieces = pieces;
      this.decoder = decoder;
      this.fallbackDir = fallbackDir;
      this.counts = counts;
      if (!pieces.isEmpty()) {
        JsonNode first = pieces.get(0);
        part =
            String.format(
                Locale.ROOT,
                "part-%06d-%015d", first.get("file").asLong(), first.get("start").asLong());
      }
    }

    @Override
    public boolean hasNext() {
      try {
        while (ready == null) {
          if (current == null) {
            if (next >= pieces.size()) {
              return false;
            }
            current = new Piece(pieces.get(next++), decoder, fallbackDir, part);
          }
          ready = current.nextRow();
          if (ready == null) {
            counts.add(current.finish());
            current = null;
          }
        }
        return true;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    }

    @Override
    public InternalRow next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      InternalRow row = ready;
      ready = null;
      return row;
    }
  }

  /** One piece: its lines, its good rows, its fallback lines and its counts. */
  static final class Piece {
    final JsonNode spec;
    final Decoder decoder;
    final String fallbackDir;
    final String part;
    final String path;
    final long size;
    final long mtimeNs;
    final Object[] fixed; // _source_file + ingest_* values
    String changed;
    byte[] data;
    int dataLen;
    List<byte[]> blocks = new ArrayList<>();
    int pos; // next line start in data
    long offsetBase; // file offset of data[0]
    boolean done;
    long decoded = 0;
    String minSeq;
    String maxSeq;
    String lastSeq;
    boolean ordered = true; // every good sequence number above the one before it
    ByteArrayOutputStream fallbackBytes;
    DataOutputStream fallback;
    long fallbackCount = 0;

    Piece(JsonNode spec, Decoder decoder, String fallbackDir, String part) throws IOException {
      this.spec = spec;
      this.decoder = decoder;
      this.fallbackDir = fallbackDir;
      this.part = part;
      this.path = spec.get("path").asText();
      this.size = spec.get("size").asLong();
      this.mtimeNs = spec.get("mtime_ns").asLong();
      JsonNode attrs = spec.get("attrs");
      this.fixed = new Object[5];
      fixed[0] = UTF8String.fromString(spec.get("key").asText());
      String[] names = {"ingest_year", "ingest_month", "ingest_day", "ingest_hour"};
      for (int i = 0; i < names.length; i++) {
        JsonNode v = attrs == null ? null : attrs.get(names[i]);
        fixed[i + 1] = v == null || v.isNull() ? null : Integer.valueOf(v.asInt());
      }
      changed = fileChange(path, size, mtimeNs);
      if (changed == null) {
        read();
      } else {
        done = true;
      }
    }

    void read() throws IOException {
      long start = spec.get("start").asLong();
      long end = Math.min(spec.get("end").asLong(), size);
      long maxLine = decoder.limits.maxLine;
      boolean skipFirst = false;
      try (RandomAccessFile f = new RandomAccessFile(path, "r")) {
        if (start > 0) {
          f.seek(start - 1);
          int b = f.read();
          skipFirst = b != '\n';
        }
        f.seek(start);
        int want = (int) Math.max(0, end - start);
        byte[] buf = new byte[want];
        int got = 0;
        while (got < want) {
          int n = f.read(buf, got, want - got);
          if (n < 0) {
            break;
          }
          got += n;
        }
        MessageDigest sha = sha256();
        for (int b = 0; b < got; b += HASH_BLOCK) {
          sha.update(buf, b, Math.min(HASH_BLOCK, got - b));
          blocks.add(sha.digest());
        }
        if (got == 0 && start == 0) {
          blocks.add(sha.digest());
        }
        int lastNewline = lastIndexOf(buf, got, (byte) '\n');
        ByteArrayOutputStream tail = null;
        if (end < size && lastNewline != got - 1) {
          tail = new ByteArrayOutputStream();
          long have = 0;
          byte[] chunk = new byte[1 << 20];
          while (end + have < size && have <= maxLine) {
            int len = (int) Math.min(1 << 20, size - end - have);
            int n = readFully(f, chunk, len);
            if (n <= 0) {
              break;
            }
            int cut = indexOf(chunk, 0, n, (byte) '\n');
            if (cut >= 0) {
              tail.write(chunk, 0, cut);
              have += cut;
              break;
            }
            tail.write(chunk, 0, n);
            have += n;
          }
        }
        if (tail != null && tail.size() > 0) {
          byte[] joined = new byte[got + tail.size()];
          System.arraycopy(buf, 0, joined, 0, got);
          byte[] t = tail.toByteArray();
          System.arraycopy(t, 0, joined, got, t.length);
          buf = joined;
          got = joined.length;
        }
        data = buf;
        dataLen = got;
        offsetBase = start;
        pos = 0;
        if (skipFirst) {
          int nl = indexOf(data, 0, dataLen, (byte) '\n');
          pos = nl < 0 ? dataLen + 1 : nl + 1;
        }
      }
    }

    /** The next good row of the piece, or null when its lines are done. */
    InternalRow nextRow() throws IOException {
      while (!done && pos <= dataLen) {
        int nl = indexOf(data, pos, dataLen, (byte) '\n');
        int stop = nl < 0 ? dataLen : nl;
        int from = pos;
        int n = stop - from;
        pos = stop + 1;
        if (nl < 0) {
          pos = dataLen + 1;
        }
        if (n == 0 || (n == 1 && data[from] == '\r')) {
          continue;
        }
        long offset = offsetBase + from;
        InternalRow row = n > decoder.limits.maxLine ? null : decoder.decode(data, from, n, this);
        if (row == null) {
          writeFallback(offset, from, n);
          continue;
        }
        row.setLong(1, offset);
        for (int i = 1; i < fixed.length; i++) {
          row.update(4 + i, fixed[i]);
        }
        row.update(0, fixed[0]);
        decoded++;
        return row;
      }
      done = true;
      return null;
    }

    void good(String seq) {
      if (seq == null) {
        return;
      }
      if (ordered && lastSeq != null && compareCodePoints(seq, lastSeq) > 0) {
        // still in order: the last one is the greatest, the first the least
        maxSeq = seq;
        lastSeq = seq;
        return;
      }
      if (minSeq == null || compareCodePoints(seq, minSeq) < 0) {
        minSeq = seq;
      }
      if (maxSeq == null || compareCodePoints(seq, maxSeq) > 0) {
        maxSeq = seq;
      }
      if (lastSeq != null && compareCodePoints(seq, lastSeq) <= 0) {
        ordered = false;
      }
      lastSeq = seq;
    }

    void writeFallback(long offset, int from, int n) throws IOException {
      if (fallback == null) {
        fallbackBytes = new ByteArrayOutputStream();
        fallback = new DataOutputStream(fallbackBytes);
      }
      int keep = (int) Math.min(n, Math.max(decoder.limits.maxLine, RAW_KEEP));
      fallback.writeLong(offset);
      fallback.writeLong(n);
      fallback.writeInt(keep);
      fallback.write(data, from, keep);
      fallbackCount++;
    }

    /** The piece's counts (JSON); its fallback lines published atomically. */
    String finish() throws IOException {
      data = null;
      if (changed == null) {
        changed = fileChange(path, size, mtimeNs);
      }
      long start = spec.get("start").asLong();
      String name = String.format(Locale.ROOT, "%06d-%015d.lines", spec.get("file").asLong(), start);
      Path target = Paths.get(fallbackDir, name);
      if (fallback != null) {
        fallback.flush();
        Files.createDirectories(target.getParent());
        Path tmp = Paths.get(fallbackDir, "." + name + "." + UUID.randomUUID() + ".tmp");
        Files.write(tmp, fallbackBytes.toByteArray());
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        fallback = null;
        fallbackBytes = null;
      } else {
        Files.deleteIfExists(target); // a retried task decoded it all here
      }
      ObjectNode out = new ObjectMapper().createObjectNode();
      out.put("part", part);
      out.put("file", spec.get("file").asLong());
      out.put("_source_file", spec.get("key").asText());
      out.put("start", start);
      out.put("end", spec.get("end").asLong());
      out.put("records_in", decoded);
      out.put("decoded", decoded);
      out.put("quarantined", 0);
      out.put("min_seq", minSeq);
      out.put("max_seq", maxSeq);
      out.put("unique_seq", ordered);
      StringBuilder hex = new StringBuilder();
      for (byte[] block : blocks) {
        for (byte b : block) {
          hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        }
      }
      out.put("blocks", hex.toString());
      out.put("changed", changed);
      out.put("fallback", fallbackCount);
      return out.toString();
    }
  }

  static String fileChange(String path, long size, long mtimeNs) throws IOException {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(Paths.get(path), BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      return "removed " + WHILE_READ;
    }
    if (a.size() != size) {
      return "size changed from " + size + " to " + a.size() + " bytes " + WHILE_READ;
    }
    if (a.lastModifiedTime().to(TimeUnit.NANOSECONDS) != mtimeNs) {
      return "modified " + WHILE_READ;
    }
    return null;
  }

  static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static int readFully(RandomAccessFile f, byte[] buf, int len) throws IOException {
    int got = 0;
    while (got < len) {
      int n = f.read(buf, got, len - got);
      if (n < 0) {
        break;
      }
      got += n;
    }
    return got;
  }

  static int indexOf(byte[] b, int from, int to, byte v) {
    for (int i = from; i < to; i++) {
      if (b[i] == v) {
        return i;
      }
    }
    return -1;
  }

  static int lastIndexOf(byte[] b, int to, byte v) {
    for (int i = to - 1; i >= 0; i--) {
      if (b[i] == v) {
        return i;
      }
    }
    return -1;
  }

  /** Python's str order (code points), not Java's (UTF-16 units). */
  static int compareCodePoints(String a, String b) {
    // Where the first differing chars are both below the surrogates, UTF-16 order is
    // code point order (a surrogate pair before them is the same in both strings): the
    // usual case, sequence numbers being digits. Anything else walks the code points.
    int n = Math.min(a.length(), b.length());
    for (int k = 0; k < n; k++) {
      char x = a.charAt(k);
      char y = b.charAt(k);
      if (x != y) {
        if (x < Character.MIN_SURROGATE && y < Character.MIN_SURROGATE) {
          return x < y ? -1 : 1;
        }
        return compareCodePointsSlow(a, b);
      }
    }
    return Integer.compare(a.length(), b.length());
  }

  static int compareCodePointsSlow(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int x = a.codePointAt(i);
      int y = b.codePointAt(j);
      if (x != y) {
        return Integer.compare(x, y);
      }
      i += Character.charCount(x);
      j += Character.charCount(y);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  // ------------------------------------------------------------------------------ decoding

  /** Thrown (without a stack) when a line is not for the fast path. */
  static final class Doubt extends Exception {
    static final Doubt INSTANCE = new Doubt();

    private Doubt() {
      super(null, null, false, false);
    }
  }

  static final class Decoder {
    static final Map<String, Decoder> CACHE = new ConcurrentHashMap<>();
    static final JsonFactory JSON = new JsonFactory();

    final Limits limits;
    final Map<UUID, Version> versions = new HashMap<>();
    final int width;

    static Decoder get(String versionsJson, String outputSchemaJson, Limits limits)
        throws IOException {
      String key = versionsJson + "\u0000" + outputSchemaJson + "\u0000" + limits.maxLine + ","
          + limits.maxRecord + "," + limits.maxInflated + "," + limits.maxDepth;
      Decoder d = CACHE.get(key);
      if (d == null) {
        d = new Decoder(versionsJson, outputSchemaJson, limits);
        CACHE.put(key, d);
      }
      return d;
    }

    Decoder(String versionsJson, String outputSchemaJson, Limits limits) throws IOException {
      this.limits = limits;
      StructType output = (StructType) DataType.fromJson(outputSchemaJson);
      this.width = output.fields().length;
      StructType record = (StructType) output.apply("record").dataType();
      ObjectNode all = (ObjectNode) new ObjectMapper().readTree(versionsJson);
      Iterator<Map.Entry<String, JsonNode>> it = all.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        Reader reader = null;
        JsonPlan.Reader json = null;
        try {
          String text = e.getValue().get("schema").asText();
          JsonNode format = e.getValue().get("format");
          if (format != null && format.asText().equals("JSON")) {
            json = new JsonPlan.Reader(JsonPlan.of(new ObjectMapper().readTree(text)), record,
                limits.maxDepth);
          } else {
            reader = Plan.of(new Schema.Parser().setValidateDefaults(false).parse(text), record);
          }
        } catch (Plan.Ineligible | IOException | RuntimeException ex) {
          continue; // every record of this version takes the Python path
        }
        int number = e.getValue().get("number").asInt();
        versions.put(UUID.fromString(e.getKey()), new Version(number, reader, json));
      }
    }

    /** The staged row of a line, or null for the Python decoder. */
    InternalRow decode(byte[] b, int from, int n, Piece piece) {
      try {
        return decodeOrDoubt(b, from, n, piece);
      } catch (Doubt | IOException | RuntimeException | StackOverflowError e) {
        return null;
      }
    }

    /** The envelope member's bit (data 1, sequenceNumber 2, partitionKey 4,
     * approximateArrivalTimestamp 8), or 0 for a member the decode does not read. */
    static int envelopeBit(String name) {
      switch (name) {
        case "data": return 1;
        case "sequenceNumber": return 2;
        case "partitionKey": return 4;
        case "approximateArrivalTimestamp": return 8;
        default: return 0;
      }
    }

    InternalRow decodeOrDoubt(byte[] b, int from, int n, Piece piece) throws Doubt, IOException {
      Utf8.requireObjectText(b, from, n);
      String data = null;
      String seq = null;
      String key = null;
      String arrival = null;
      int known = 0; // the envelope members read, one bit each (envelopeBit)
      Set<String> others = null; // any other top-level member names, once one comes
      try (JsonParser p = JSON.createParser(b, from, n)) {
        int depth = 0;
        JsonToken t = p.nextToken();
        while (t != null) {
          switch (t) {
            case START_OBJECT:
            case START_ARRAY:
              if (++depth > MAX_ENVELOPE_DEPTH) {
                throw Doubt.INSTANCE;
              }
              break;
            case END_OBJECT:
            case END_ARRAY:
              depth--;
              break;
            case FIELD_NAME:
              String name = Utf8.noSurrogates(p.getCurrentName());
              if (depth == 1) {
                int bit = envelopeBit(name);
                if (bit == 0) {
                  if (others == null) {
                    others = new HashSet<>();
                  }
                  if (!others.add(name)) {
                    throw Doubt.INSTANCE; // a repeated member: leave it to the reference
                  }
                } else {
                  if ((known & bit) != 0) {
                    throw Doubt.INSTANCE; // a repeated member: leave it to the reference
                  }
                  known |= bit;
                  JsonToken v = p.nextToken();
                  String text;
                  if (v == JsonToken.VALUE_STRING) {
                    text = Utf8.noSurrogates(p.getText());
                  } else if (v == JsonToken.VALUE_NULL && !name.equals("data")) {
                    text = null;
                  } else {
                    throw Doubt.INSTANCE; // numbers are printed by Python's rules there
                  }
                  switch (bit) {
                    case 1: data = text; break;
                    case 2: seq = text; break;
                    case 4: key = text; break;
                    default: arrival = text; break;
                  }
                }
              }
              break;
            case VALUE_STRING:
              Utf8.noSurrogates(p.getText());
              break;
            case VALUE_NUMBER_INT:
              if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw Doubt.INSTANCE;
              }
              break;
            case VALUE_NUMBER_FLOAT:
              if (Double.isInfinite(p.getDoubleValue())) {
                throw Doubt.INSTANCE;
              }
              break;
            default:
              break;
          }
          if (depth == 0) {
            break;
          }
          t = p.nextToken();
        }
        if (depth != 0 || p.nextToken() != null) {
          throw Doubt.INSTANCE;
        }
      }
      if (data == null || data.length() > limits.maxBase64 || data.length() % 4 != 0) {
        throw Doubt.INSTANCE;
      }
      int eq = data.indexOf('=');
      if (eq >= 0 && eq < data.length() - 2) {
        throw Doubt.INSTANCE;
      }
      byte[] framed = Base64.getDecoder().decode(data); // IllegalArgumentException: a doubt
      if (framed.length > limits.maxRecord || framed.length < 18 || framed[0] != 3
          || (framed[1] != 0 && framed[1] != 5)) {
        throw Doubt.INSTANCE;
      }
      long hi = 0;
      long lo = 0;
      for (int k = 2; k < 10; k++) {
        hi = (hi << 8) | (framed[k] & 0xFF);
      }
      for (int k = 10; k < 18; k++) {
        lo = (lo << 8) | (framed[k] & 0xFF);
      }
      Version version = versions.get(new UUID(hi, lo));
      if (version == null) {
        throw Doubt.INSTANCE;
      }
      Avro in;
      if (framed[1] == 5) {
        in = new Avro(inflate(framed, 18, framed.length - 18), 0);
      } else {
        in = new Avro(framed, 18);
      }
      Object record;
      if (version.json != null) {
        record = version.json.read(in.buf, in.pos, in.buf.length - in.pos);
      } else {
        record = version.reader.read(in);
        if (in.pos != in.buf.length) {
          throw Doubt.INSTANCE;
        }
      }
      GenericInternalRow row = new GenericInternalRow(width);
      row.update(2, seq == null ? null : UTF8String.fromString(seq));
      row.update(3, key == null ? null : UTF8String.fromString(key));
      row.update(4, arrival == null ? null : UTF8String.fromString(arrival));
      row.update(9, version.number);
      row.update(10, record);
      piece.good(seq);
      return row;
    }

    byte[] inflate(byte[] b, int off, int len) throws Doubt {
      Inflater inflater = new Inflater();
      try {
        inflater.setInput(b, off, len);
        long cap = limits.maxInflated;
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(len * 4, 1 << 16));
        byte[] chunk = new byte[1 << 16];
        while (!inflater.finished()) {
          int n = inflater.inflate(chunk);
          if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
            throw Doubt.INSTANCE;
          }
          out.write(chunk, 0, n);
          if (out.size() > cap) {
            throw Doubt.INSTANCE;
          }
        }
        if (inflater.getRemaining() != 0) {
          throw Doubt.INSTANCE;
        }
        return out.toByteArray();
      } catch (DataFormatException e) {
        throw Doubt.INSTANCE;
      } finally {
        inflater.end();
      }
    }
  }

  static final class Version {
    final int number;
    final Reader reader; // Avro, or null
    final JsonPlan.Reader json; // JSON Schema, or null

    Version(int number, Reader reader, JsonPlan.Reader json) {
      this.number = number;
      this.reader = reader;
      this.json = json;
    }
  }

  // ------------------------------------------------------------------------------ UTF-8

  static final class Utf8 {
    /** Strict UTF-8 (no overlongs, no surrogates, nothing past U+10FFFF), or a doubt. */
    static void check(byte[] b, int from, int to) throws Doubt {
      int i = from;
      while (i < to) {
        int c = b[i] & 0xFF;
        if (c < 0x80) {
          i++;
          continue;
        }
        int need;
        int min;
        int cp;
        if (c >= 0xC2 && c <= 0xDF) {
          need = 1;
          min = 0x80;
          cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
          need = 2;
          min = 0x800;
          cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
          need = 3;
          min = 0x10000;
          cp = c & 0x07;
        } else {
          throw Doubt.INSTANCE;
        }
        if (i + need >= to) {
          throw Doubt.INSTANCE;
        }
        for (int k = 1; k <= need; k++) {
          int d = b[i + k] & 0xFF;
          if ((d & 0xC0) != 0x80) {
            throw Doubt.INSTANCE;
          }
          cp = (cp << 6) | (d & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
          throw Doubt.INSTANCE;
        }
        i += need + 1;
      }
    }

    /**
     * Bytes orjson would read as the text of one JSON object, as far as bytes tell: strict
     * UTF-8, no control byte but JSON's whitespace (orjson refuses one; a NUL would also let
     * Jackson take the bytes for UTF-16 or UTF-32), and a {@code '{'} after whitespace.
     */
    static void requireObjectText(byte[] b, int from, int n) throws Doubt {
      for (int k = from; k < from + n; k++) {
        if ((b[k] & 0xFF) < 0x20 && b[k] != '\t' && b[k] != '\r' && b[k] != '\n') {
          throw Doubt.INSTANCE;
        }
      }
      check(b, from, from + n);
      int i = from;
      while (i < from + n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) {
        i++;
      }
      if (i >= from + n || b[i] != '{') {
        throw Doubt.INSTANCE;
      }
    }

    static String noSurrogates(String s) throws Doubt {
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        if (Character.isSurrogate(c)) {
          if (Character.isHighSurrogate(c) && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            i++;
            continue;
          }
          throw Doubt.INSTANCE;
        }
      }
      return s;
    }
  }

  // ------------------------------------------------------------------------------ Avro

  /** A cursor over an Avro binary payload. */
  static final class Avro {
    final byte[] buf;
    int pos;

    Avro(byte[] buf, int pos) {
      this.buf = buf;
      this.pos = pos;
    }

    /** A zigzag varint that fits 64 bits, or a doubt. */
    long readLong() throws Doubt {
      long u = 0;
      int shift = 0;
      while (true) {
        if (pos >= buf.length) {
          throw Doubt.INSTANCE;
        }
        int b = buf[pos++] & 0xFF;
        if (shift == 63) {
          if ((b & 0x7F) > 1 || (b & 0x80) != 0) {
            throw Doubt.INSTANCE;
          }
        }
        u |= ((long) (b & 0x7F)) << shift;
        if ((b & 0x80) == 0) {
          break;
        }
        shift += 7;
        if (shift > 63) {
          throw Doubt.INSTANCE;
        }
      }
      return (u >>> 1) ^ -(u & 1);
    }

    int length() throws Doubt {
      long n = readLong();
      if (n < 0 || n > buf.length - pos) {
        throw Doubt.INSTANCE;
      }
      return (int) n;
    }

    byte[] bytes(int n) throws Doubt {
      if (n > buf.length - pos) {
        throw Doubt.INSTANCE;
      }
      byte[] out = new byte[n];
      System.arraycopy(buf, pos, out, 0, n);
      pos += n;
      return out;
    }

    /** The number of items of the next block (0 at the end), its byte size skipped. */
    long block() throws Doubt {
      long count = readLong();
      if (count < 0) {
        if (count == Long.MIN_VALUE) {
          throw Doubt.INSTANCE;
        }
        count = -count;
        readLong();
      }
      if (count > buf.length - pos) {
        throw Doubt.INSTANCE; // every item of an eligible type takes at least one byte
      }
      return count;
    }
  }

  /** Reads one value of a writer schema into Spark's internal form of the target type. */
  interface Reader {
    Object read(Avro in) throws Doubt;
  }

  static final class Plan {
    static final class Ineligible extends Exception {
      Ineligible(String why) {
        super(why);
      }
    }

    static Reader of(Schema writer, DataType target) throws Ineligible {
      return of(writer, target, 0);
    }

    static Reader of(Schema w, DataType t, int depth) throws Ineligible {
      if (depth > 32) {
        throw new Ineligible("too deep");
      }
      Schema.Type type = w.getType();
      if (w.getLogicalType() != null || w.getProp("logicalType") != null) {
        // fastavro converts logical types (datetime, Decimal, UUID...): the reference path
        throw new Ineligible("logical type");
      }
      switch (type) {
        case BOOLEAN:
          if (t instanceof BooleanType) {
            return in -> {
              if (in.pos >= in.buf.length) {
                throw Doubt.INSTANCE;
              }
              int b = in.buf[in.pos++];
              if (b != 0 && b != 1) {
                throw Doubt.INSTANCE;
              }
              return b == 1;
            };
          }
          break;
        case INT:
        case LONG:
          if (t instanceof IntegerType) {
            return in -> {
              long v = in.readLong();
              if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
                throw Doubt.INSTANCE;
              }
              return (int) v;
            };
          }
          if (t instanceof LongType) {
            return Avro::readLong;
          }
          break;
        case FLOAT:
          if (t instanceof FloatType || t instanceof DoubleType) {
            final boolean widen = t instanceof DoubleType;
            return in -> {
              if (in.buf.length - in.pos < 4) {
                throw Doubt.INSTANCE;
              }
              int bits = (in.buf[in.pos] & 0xFF) | (in.buf[in.pos + 1] & 0xFF) << 8
                  | (in.buf[in.pos + 2] & 0xFF) << 16 | (in.buf[in.pos + 3] & 0xFF) << 24;
              in.pos += 4;
              float f = Float.intBitsToFloat(bits);
              if (Float.isNaN(f)) {
                throw Doubt.INSTANCE;
              }
              return widen ? (Object) (double) f : (Object) f;
            };
          }
          break;
        case DOUBLE:
          if (t instanceof DoubleType) {
            return in -> {
              if (in.buf.length - in.pos < 8) {
                throw Doubt.INSTANCE;
              }
              long bits = 0;
              for (int k = 7; k >= 0; k--) {
                bits = (bits << 8) | (in.buf[in.pos + k] & 0xFF);
              }
              in.pos += 8;
              double d = Double.longBitsToDouble(bits);
              if (Double.isNaN(d)) {
                throw Doubt.INSTANCE;
              }
              return d;
            };
          }
          break;
        case STRING:
          if (t instanceof StringType) {
            return in -> {
              int n = in.length();
              Utf8.check(in.buf, in.pos, in.pos + n);
              UTF8String s = UTF8String.fromBytes(in.buf, in.pos, n);
              in.pos += n;
              return s;
            };
          }
          break;
        case BYTES:
          if (t instanceof BinaryType) {
            return in -> in.bytes(in.length());
          }
          break;
        case FIXED:
          if (t instanceof BinaryType) {
            final int size = w.getFixedSize();
            return in -> in.bytes(size);
          }
          break;
        case ENUM:
          if (t instanceof StringType) {
            final List<String> symbols = w.getEnumSymbols();
            final UTF8String[] values = new UTF8String[symbols.size()];
            for (int k = 0; k < values.length; k++) {
              values[k] = UTF8String.fromString(symbols.get(k));
            }
            return in -> {
              long v = in.readLong();
              if (v < 0 || v >= values.length) {
                throw Doubt.INSTANCE;
              }
              return values[(int) v];
            };
          }
          break;
        case UNION:
          return union(w, t, depth);
        case ARRAY:
          if (t instanceof ArrayType) {
            final Reader item = of(w.getElementType(), ((ArrayType) t).elementType(), depth + 1);
            requireBytes(w.getElementType());
            return in -> {
              List<Object> items = new ArrayList<>();
              for (long n = in.block(); n != 0; n = in.block()) {
                for (long k = 0; k < n; k++) {
                  items.add(item.read(in));
                }
              }
              return new GenericArrayData(items.toArray());
            };
          }
          break;
        case MAP:
          if (t instanceof MapType && ((MapType) t).keyType() instanceof StringType) {
            final Reader value = of(w.getValueType(), ((MapType) t).valueType(), depth + 1);
            return in -> {
              List<Object> keys = new ArrayList<>();
              List<Object> values = new ArrayList<>();
              Set<UTF8String> seen = new HashSet<>();
              for (long n = in.block(); n != 0; n = in.block()) {
                for (long k = 0; k < n; k++) {
                  int len = in.length();
                  Utf8.check(in.buf, in.pos, in.pos + len);
                  UTF8String key = UTF8String.fromBytes(in.buf, in.pos, len);
                  in.pos += len;
                  if (!seen.add(key)) {
                    throw Doubt.INSTANCE; // a repeated key: the reference keeps the last
                  }
                  keys.add(key);
                  values.add(value.read(in));
                }
              }
              return new ArrayBasedMapData(
                  new GenericArrayData(keys.toArray()), new GenericArrayData(values.toArray()));
            };
          }
          break;
        case RECORD:
          if (t instanceof StructType) {
            return record(w, (StructType) t, depth);
          }
          break;
        default:
          break;
      }
      throw new Ineligible(type + " as " + t.simpleString());
    }

    static void requireBytes(Schema item) throws Ineligible {
      Schema.Type type = item.getType();
      if (type == Schema.Type.NULL || (type == Schema.Type.RECORD && item.getFields().isEmpty())
          || (type == Schema.Type.FIXED && item.getFixedSize() == 0)) {
        throw new Ineligible("array items of no bytes");
      }
    }

    static Reader union(Schema w, DataType t, int depth) throws Ineligible {
      List<Schema> branches = w.getTypes();
      if (branches.size() != 2) {
        throw new Ineligible("union of " + branches.size());
      }
      int nullAt = -1;
      for (int k = 0; k < 2; k++) {
        if (branches.get(k).getType() == Schema.Type.NULL) {
          nullAt = k;
        }
      }
      if (nullAt < 0 || branches.get(1 - nullAt).getType() == Schema.Type.NULL) {
        throw new Ineligible("union without exactly one null");
      }
      final int nullIndex = nullAt;
      final Reader value = of(branches.get(1 - nullAt), t, depth + 1);
      return in -> {
        long index = in.readLong();
        if (index == nullIndex) {
          return null;
        }
        if (index != 1 - nullIndex) {
          throw Doubt.INSTANCE;
        }
        return value.read(in);
      };
    }

    static Reader record(Schema w, StructType t, int depth) throws Ineligible {
      StructField[] fields = t.fields();
      Set<String> targetNames = new HashSet<>();
      for (StructField f : fields) {
        if (!targetNames.add(f.name())) {
          throw new Ineligible("repeated field " + f.name());
        }
      }
      List<Schema.Field> writerFields = w.getFields();
      if (writerFields.isEmpty()) {
        throw new Ineligible("empty record");
      }
      final Reader[] readers = new Reader[writerFields.size()];
      final int[] slots = new int[writerFields.size()];
      for (int k = 0; k < readers.length; k++) {
        Schema.Field f = writerFields.get(k);
        int slot = -1;
        for (int j = 0; j < fields.length; j++) {
          if (fields[j].name().equals(f.name())) {
            slot = j;
          }
        }
        slots[k] = slot;
        // A field the table does not have is still read (and dropped), as the reference
        // reads it and Arrow ignores it: its own type decides only whether it decodes.
        readers[k] = slot >= 0 ? of(f.schema(), fields[slot].dataType(), depth + 1)
            : of(f.schema(), sparkTypeOf(f.schema()), depth + 1);
      }
      final int width = fields.length;
      return in -> {
        GenericInternalRow row = new GenericInternalRow(width);
        for (int k = 0; k < readers.length; k++) {
          Object v = readers[k].read(in);
          if (slots[k] >= 0) {
            row.update(slots[k], v);
          }
        }
        return row;
      };
    }

    /** The Spark type floe gives a writer schema (floe.registry.types), for skipped fields. */
    static DataType sparkTypeOf(Schema w) throws Ineligible {
      if (w.getLogicalType() != null || w.getProp("logicalType") != null) {
        throw new Ineligible("logical type");
      }
      switch (w.getType()) {
        case BOOLEAN: return org.apache.spark.sql.types.DataTypes.BooleanType;
        case INT: return org.apache.spark.sql.types.DataTypes.IntegerType;
        case LONG: return org.apache.spark.sql.types.DataTypes.LongType;
        case FLOAT: return org.apache.spark.sql.types.DataTypes.FloatType;
        case DOUBLE: return org.apache.spark.sql.types.DataTypes.DoubleType;
        case STRING:
        case ENUM: return org.apache.spark.sql.types.DataTypes.StringType;
        case BYTES:
        case FIXED: return org.apache.spark.sql.types.DataTypes.BinaryType;
        case ARRAY: return new ArrayType(sparkTypeOf(w.getElementType()), true);
        case MAP:
          return new MapType(
              org.apache.spark.sql.types.DataTypes.StringType, sparkTypeOf(w.getValueType()), true);
        case UNION:
          for (Schema b : w.getTypes()) {
            if (b.getType() != Schema.Type.NULL) {
              return sparkTypeOf(b);
            }
          }
          throw new Ineligible("null union");
        case RECORD:
          List<StructField> out = new ArrayList<>();
          for (Schema.Field f : w.getFields()) {
            out.add(new StructField(f.name(), sparkTypeOf(f.schema()), true,
                org.apache.spark.sql.types.Metadata.empty()));
          }
          return new StructType(out.toArray(new StructField[0]));
        default:
          throw new Ineligible(w.getType().toString());
      }
    }
  }
}
