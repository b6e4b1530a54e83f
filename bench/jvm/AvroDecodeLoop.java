// A bare JVM decode loop: Avro's GenericDatumReader (the Avro library pyspark bundles)
// over length-prefixed schemaless payloads, timed in the whole process's CPU time (JIT and
// GC threads included, as Python's process_time counts its process), and in the loop
// thread's own CPU time; the JVM side of
// bench/bench_jvm_avro.py (what a JVM decoder, ADR 0010, would start from).
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.FileInputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;

public class AvroDecodeLoop {
  public static void main(String[] args) throws Exception {
    Schema schema = new Schema.Parser().parse(new File(args[0]));
    List<byte[]> payloads = new ArrayList<>();
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(new FileInputStream(args[1])))) {
      while (in.available() > 0) {
        byte[] payload = new byte[in.readInt()];
        in.readFully(payload);
        payloads.add(payload);
      }
    }
    int n = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(schema);
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    BinaryDecoder decoder = null;
    long fields = 0;
    for (int round = 0; round < rounds; round++) {
      long started = cpu.getCurrentThreadCpuTime();
      long processStarted = os.getProcessCpuTime();
      for (int k = 0; k < n; k++) {
        decoder = DecoderFactory.get().binaryDecoder(payloads.get(k % payloads.size()), decoder);
        fields += reader.read(null, decoder).getSchema().getFields().size();
      }
      double seconds = (cpu.getCurrentThreadCpuTime() - started) / 1e9;
      double processSeconds = (os.getProcessCpuTime() - processStarted) / 1e9;
      // one line per round: "ROUND <index> <per process CPU-second> <per thread CPU-second>"
      System.out.printf("ROUND %d %.0f %.0f%n", round, n / processSeconds, n / seconds);
    }
    System.out.printf("FIELDS %d%n", fields);
  }
}
