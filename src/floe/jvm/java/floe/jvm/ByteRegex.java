package floe.jvm;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code value rlike pattern} over the value's UTF-8 bytes (docs/decisions/0061).
 *
 * <p>Spark's {@code rlike} decodes every value into a Java string and runs
 * {@code java.util.regex}'s {@code find()} on it. For a pattern in a plain subset this
 * function answers the same question on the bytes: a pattern is compiled once into a
 * small automaton (at most 64 states), and an ASCII value is scanned once, through
 * transitions cached as the scan meets them. A value with any byte above 0x7F is decoded
 * as Spark decodes it and handed to {@code java.util.regex}, so only ASCII, where a byte is
 * a character, takes the automaton.
 *
 * <p>The subset, where the answer is the regular language's and cannot differ from
 * {@code java.util.regex}'s backtracking search: ASCII literals and escaped punctuation;
 * {@code . \d \D \s \S \w \W \t \n \r \f \a \e}; classes of those, of literals and of
 * ranges, negated or not; groups {@code (...)} and {@code (?:...)}; alternation; the
 * quantifiers {@code * + ? {n} {n,} {n,m}} (greedy or lazy, counts up to 16) over a body
 * that cannot match the empty string; and the anchors {@code ^} and {@code $} as
 * {@code java.util.regex} reads them without flags. Anything else (flags, back
 * references, look-around, possessive quantifiers, {@code \b}, nested classes, non-ASCII
 * in the pattern, ...) is not compiled: {@link #udf} and {@link #column} return null and
 * the caller keeps Spark's {@code rlike}.
 *
 * <p>Spark deserializes a copy of the function per task. Its caches are built on first
 * use and belong to the thread that built them; any other thread calling the same object
 * (the driver folding a constant while another query plans, say) takes the uncached
 * path, which reads only immutable state.
 */
public final class ByteRegex implements UDF1<byte[], Boolean> {
  private static final long serialVersionUID = 1L;

  static final int MAX_NODES = 64;
  static final int MAX_COUNT = 16;
  static final int MAX_CACHED = 512;

  // Automaton nodes.
  static final int CONSUME = 0;
  static final int SPLIT = 1;
  static final int BEGIN = 2;
  static final int DOLLAR = 3;
  static final int MATCH = 4;

  // Position kinds: bit 2 = at the start of the input, bit 1 = `$` holds here.
  static final int AT_START = 2;
  static final int AT_DOLLAR = 1;

  // Flags of a cached move: the next set holds the match, or nothing can match any more.
  static final int MATCHED = 1;
  static final int DEAD = 2;

  private final String pattern;
  /** Consuming nodes that take byte b (b < 128). */
  private final long[] byBytes;
  /** [kind][node]: the closure reached after a consuming node, at a position of that kind. */
  private final long[][] after;
  /** [kind]: the closure of the entry, at a position of that kind. */
  private final long[] start;

  private final long matchBit;
  private transient Pattern fallback;
  private transient HashMap<Long, Integer> ids;
  private transient long[] states;
  /** [state * 128 + byte]: the next state * 128 | MATCHED or DEAD; -1 not yet known. */
  private transient int[] moves;
  /** [state * 128 + byte] of the last byte: 0 not yet known, 1 no match, 2 a match. */
  private transient byte[] finals;
  /** Whether a match can still start after position 0. */
  private final boolean restarts;

  private ByteRegex(String pattern, Program program) {
    this.pattern = pattern;
    this.byBytes = program.byBytes();
    this.after = new long[4][];
    this.start = new long[4];
    for (int kind = 0; kind < 4; kind++) {
      after[kind] = new long[program.size];
      for (int node = 0; node < program.size; node++) {
        if (program.kind[node] == CONSUME) {
          after[kind][node] = program.closure(program.out1[node], kind);
        }
      }
      start[kind] = program.closure(program.entry, kind);
    }
    this.matchBit = 1L << program.match;
    this.restarts = start[0] != 0 || start[AT_DOLLAR] != 0;
  }

  /**
   * The function for {@code pattern}, or null when the pattern is outside the subset (or
   * {@code java.util.regex} refuses it): the caller then keeps Spark's {@code rlike}.
   */
  public static UDF1<byte[], Boolean> udf(String pattern) {
    try {
      Pattern.compile(pattern);
      Program program = new Program();
      Parser parser = new Parser(pattern);
      Node root = parser.parse();
      program.match = program.add(MATCH, -1, -1, null);
      program.entry = program.compile(root, program.match);
      return new ByteRegex(pattern, program);
    } catch (RuntimeException ineligible) {
      return null;
    }
  }

  /**
   * {@code value rlike pattern} as a Column whose generated code calls {@link #findUtf8}
   * of the compiled pattern (NULL for NULL), or null when the pattern is outside the subset.
   */
  public static Column column(Column value, String pattern) {
    Object matcher = udf(pattern);
    if (matcher == null) {
      return null;
    }
    return Calls.invoke(matcher, "findUtf8", DataTypes.BooleanType, value.cast(DataTypes.StringType));
  }

  /**
   * {@code find()} on a string value where it lies (a column vector's buffer, say): its
   * UTF-8 bytes are read in place, not copied; NULL never reaches here (the call
   * propagates it).
   */
  public boolean findUtf8(UTF8String s) {
    return findIn(s.getBaseObject(), s.getBaseOffset(), s.numBytes());
  }

  @Override
  public Boolean call(byte[] value) {
    if (value == null) {
      return null;
    }
    return findIn(value, Platform.BYTE_ARRAY_OFFSET, value.length);
  }

  @Override
  public String toString() {
    return "ByteRegex(" + pattern + ")";
  }

  // Equal by pattern: two calls of one pattern on one column are one expression to
  // Spark, which then evaluates it once per row (common subexpressions).
  @Override
  public boolean equals(Object other) {
    return other instanceof ByteRegex && ((ByteRegex) other).pattern.equals(pattern);
  }

  @Override
  public int hashCode() {
    return pattern.hashCode();
  }

  /** The answer for the n bytes at {@code base + off}: the automaton's for ASCII, else java.util.regex's. */
  private boolean findIn(Object base, long off, int n) {
    return Text.ascii(base, off, n) ? find(base, off, n) : fallback(base, off, n);
  }

  private boolean fallback(Object base, long off, int n) {
    if (fallback == null) {
      fallback = Pattern.compile(pattern);
    }
    byte[] value = new byte[n];
    Platform.copyMemory(base, off, value, Platform.BYTE_ARRAY_OFFSET, n);
    return fallback.matcher(new String(value, StandardCharsets.UTF_8)).find(0);
  }

  private static byte at(Object base, long off, int i) {
    return Platform.getByte(base, off + i);
  }

  /** Whether {@code $} (no flags) holds at position i of an ASCII input of n bytes. */
  static boolean dollar(Object x, long off, int i, int n) {
    if (i == n) {
      return true;
    }
    if (i == n - 1) {
      byte ch = at(x, off, i);
      if (ch == '\n') {
        return !(i > 0 && at(x, off, i - 1) == '\r'); // never between \r and \n
      }
      return ch == '\r';
    }
    return i == n - 2 && at(x, off, i) == '\r' && at(x, off, i + 1) == '\n';
  }

  private static int kind(Object x, long off, int i, int n) {
    return (i == 0 ? AT_START : 0) | (dollar(x, off, i, n) ? AT_DOLLAR : 0);
  }

  private long step(long current, byte b, int kind) {
    long moving = current & byBytes[b];
    long next = 0;
    long[] to = after[kind];
    while (moving != 0) {
      next |= to[Long.numberOfTrailingZeros(moving)];
      moving &= moving - 1;
    }
    return next;
  }

  /**
   * find(): is there a match starting anywhere (ASCII input of n bytes at {@code x + off}).
   * Through cached moves between numbered sets of alive nodes wherever the next position
   * is a plain one (not the start, {@code $} not holding), which is every position but the
   * last in most values; the general step elsewhere.
   *
   * <p>A move is read as the next state's row in {@code moves} (its number times 128),
   * so the step from one byte to the next is one load and one add, with no multiply
   * and no shift between them; its two low bits (always zero in a row number) carry
   * MATCHED or DEAD, and -1 a move not yet known: one test, off that chain, for all three.
   */
  boolean find(Object x, long off, int n) {
    if (n < 3 || !cached()) {
      return general(x, off, n, 0, 0);
    }
    // n >= 3: position 0 is the start, and `$` cannot hold there.
    if ((states[startId] & matchBit) != 0) {
      return true;
    }
    int[] mv = moves;
    int row = startId << 7;
    // Bytes 0 .. n-2, into positions 1 .. n-1. `$` can hold only at the end or before a
    // line end in the last two bytes: positions from n-2 on are checked for it.
    for (int i = 0, tail = n - 3; i < n - 1; i++) {
      if (i >= tail && dollar(x, off, i + 1, n)) {
        return general(x, off, n, i, states[row >> 7]);
      }
      int to = mv[row + at(x, off, i)];
      if ((to & (Integer.MIN_VALUE | 3)) != 0) {
        if (to < 0) {
          to = learn(row, at(x, off, i));
          if (to < 0) {
            return general(x, off, n, i, states[row >> 7]);
          }
        }
        if ((to & 3) != 0) {
          return (to & 3) == MATCHED;
        }
      }
      row = to;
    }
    // The last byte, into position n, where `$` holds.
    byte last = at(x, off, n - 1);
    int move = row + last;
    byte known = finals[move];
    if (known == 0) {
      long end = step(states[row >> 7], last, AT_DOLLAR) | start[AT_DOLLAR];
      known = (end & matchBit) != 0 ? (byte) 2 : (byte) 1;
      finals[move] = known;
    }
    return known == 2;
  }

  /**
   * The move from the state at {@code row} on byte b into a plain position, now cached:
   * the next state's row | MATCHED or DEAD; -1 when the cache is full (no move cached).
   */
  private int learn(int row, byte b) {
    long alive = step(states[row >> 7], b, 0) | start[0];
    int toId = idOf(alive);
    if (toId < 0) {
      return -1;
    }
    int flag = (alive & matchBit) != 0 ? MATCHED : alive == 0 && !restarts ? DEAD : 0;
    int to = toId << 7 | flag;
    moves[row + b] = to;
    return to;
  }

  /** From position i with {@code current} alive there (before the entry's closure). */
  private boolean general(Object x, long off, int n, int i, long current) {
    while (true) {
      current |= start[kind(x, off, i, n)];
      if ((current & matchBit) != 0) {
        return true;
      }
      if (i == n || (current == 0 && i > 0 && !restarts)) {
        return false;
      }
      current = step(current, at(x, off, i), kind(x, off, i + 1, n));
      i++;
    }
  }

  private transient int startId;
  /** The thread whose calls use (and fill) the caches; set once, under the lock. */
  private transient Thread owner;

  /** Whether the cache of numbered node sets and their moves is there (made on first use). */
  private boolean cached() {
    Thread me = Thread.currentThread();
    if (owner == me) {
      return true;
    }
    if (owner != null) {
      return false;
    }
    synchronized (this) {
      if (owner == null) {
        ids = new HashMap<>();
        states = new long[MAX_CACHED];
        moves = new int[MAX_CACHED * 128];
        finals = new byte[MAX_CACHED * 128];
        Arrays.fill(moves, -1);
        startId = idOf(start[AT_START]); // 0: the cache is empty
        owner = me;
      }
      return owner == me;
    }
  }

  private int idOf(long mask) {
    Integer known = ids.get(mask);
    if (known != null) {
      return known;
    }
    int id = ids.size();
    if (id >= MAX_CACHED) {
      return -1;
    }
    ids.put(mask, id);
    states[id] = mask;
    return id;
  }

  // ------------------------------------------------------------------ the subset's syntax

  /** A parsed pattern: a byte class, a sequence, alternatives, a repeat or an anchor. */
  static final class Node {
    final char type; // 'c' class, 's' sequence, 'a' alternatives, 'r' repeat, '^', '$'
    final boolean[] set;
    final List<Node> parts;
    final int min;
    final int max; // -1: unbounded

    Node(char type, boolean[] set, List<Node> parts, int min, int max) {
      this.type = type;
      this.set = set;
      this.parts = parts;
      this.min = min;
      this.max = max;
    }

    boolean nullable() {
      switch (type) {
        case 'c':
          return false;
        case 's':
          for (Node part : parts) {
            if (!part.nullable()) {
              return false;
            }
          }
          return true;
        case 'a':
          for (Node part : parts) {
            if (part.nullable()) {
              return true;
            }
          }
          return false;
        case 'r':
          return min == 0 || parts.get(0).nullable();
        default:
          return true; // anchors match the empty string
      }
    }
  }

  static final class Ineligible extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Ineligible(String why) {
      super(why, null, false, false);
    }
  }

  static final class Parser {
    private final String p;
    private int pos;

    Parser(String pattern) {
      this.p = pattern;
    }

    Node parse() {
      Node root = alternatives();
      if (pos != p.length()) {
        throw new Ineligible("unbalanced )");
      }
      return root;
    }

    private Node alternatives() {
      List<Node> alts = new ArrayList<>();
      alts.add(sequence());
      while (pos < p.length() && p.charAt(pos) == '|') {
        pos++;
        alts.add(sequence());
      }
      return alts.size() == 1 ? alts.get(0) : new Node('a', null, alts, 0, 0);
    }

    private Node sequence() {
      List<Node> parts = new ArrayList<>();
      while (pos < p.length() && p.charAt(pos) != '|' && p.charAt(pos) != ')') {
        parts.add(quantified(atom()));
      }
      return new Node('s', null, parts, 0, 0);
    }

    private Node quantified(Node atom) {
      if (pos >= p.length()) {
        return atom;
      }
      char c = p.charAt(pos);
      int min;
      int max;
      if (c == '*') {
        min = 0;
        max = -1;
        pos++;
      } else if (c == '+') {
        min = 1;
        max = -1;
        pos++;
      } else if (c == '?') {
        min = 0;
        max = 1;
        pos++;
      } else if (c == '{') {
        pos++;
        min = number();
        max = min;
        if (pos < p.length() && p.charAt(pos) == ',') {
          pos++;
          max = pos < p.length() && p.charAt(pos) == '}' ? -1 : number();
        }
        expect('}');
        if (max != -1 && max < min) {
          throw new Ineligible("bad count");
        }
      } else {
        return atom;
      }
      if (atom.type == '^' || atom.type == '$') {
        throw new Ineligible("quantified anchor");
      }
      if (pos < p.length() && p.charAt(pos) == '?') {
        pos++; // lazy: the same language
      }
      if (pos < p.length() && "*+?{".indexOf(p.charAt(pos)) >= 0) {
        throw new Ineligible("possessive or stacked quantifier");
      }
      if (max != 1 && atom.nullable()) {
        throw new Ineligible("repeat of a body that matches the empty string");
      }
      List<Node> body = new ArrayList<>();
      body.add(atom);
      return new Node('r', null, body, min, max);
    }

    private int number() {
      int start = pos;
      while (pos < p.length() && p.charAt(pos) >= '0' && p.charAt(pos) <= '9') {
        pos++;
      }
      if (pos == start || pos - start > 2) {
        throw new Ineligible("count");
      }
      int n = Integer.parseInt(p.substring(start, pos));
      if (n > MAX_COUNT) {
        throw new Ineligible("count above " + MAX_COUNT);
      }
      return n;
    }

    private void expect(char c) {
      if (pos >= p.length() || p.charAt(pos) != c) {
        throw new Ineligible("expected " + c);
      }
      pos++;
    }

    private Node atom() {
      char c = p.charAt(pos++);
      switch (c) {
        case '(':
          if (pos < p.length() && p.charAt(pos) == '?') {
            if (pos + 1 < p.length() && p.charAt(pos + 1) == ':') {
              pos += 2;
            } else {
              throw new Ineligible("group construct");
            }
          }
          Node inner = alternatives();
          expect(')');
          return inner;
        case '[':
          return new Node('c', charClass(), null, 0, 0);
        case '.':
          boolean[] dot = range(0, 127);
          dot['\n'] = false;
          dot['\r'] = false;
          return new Node('c', dot, null, 0, 0);
        case '^':
          return new Node('^', null, null, 0, 0);
        case '$':
          return new Node('$', null, null, 0, 0);
        case '\\':
          return new Node('c', escape(false), null, 0, 0);
        default:
          if (c >= 128 || "*+?{}]".indexOf(c) >= 0) {
            throw new Ineligible("character " + c);
          }
          return new Node('c', single(c), null, 0, 0);
      }
    }

    /** A class after its '['. */
    private boolean[] charClass() {
      boolean negate = pos < p.length() && p.charAt(pos) == '^';
      if (negate) {
        pos++;
      }
      boolean[] set = new boolean[128];
      boolean first = true;
      while (true) {
        if (pos >= p.length()) {
          throw new Ineligible("unclosed class");
        }
        char c = p.charAt(pos++);
        if (c == ']') {
          if (first) {
            throw new Ineligible("']' first in a class");
          }
          break;
        }
        if (c == '[' || c == '&' || c >= 128) {
          throw new Ineligible("class item " + c);
        }
        if (c == '\\') {
          or(set, escape(true));
        } else if (c == '-') {
          if (!first && !(pos < p.length() && p.charAt(pos) == ']')) {
            throw new Ineligible("'-' inside a class");
          }
          set['-'] = true;
        } else if (pos + 1 < p.length() && p.charAt(pos) == '-' && p.charAt(pos + 1) != ']') {
          char hi = p.charAt(pos + 1);
          if (hi == '\\' || hi == '[' || hi == '&' || hi >= 128 || hi < c) {
            throw new Ineligible("range");
          }
          pos += 2;
          or(set, range(c, hi));
        } else {
          set[c] = true;
        }
        first = false;
      }
      if (negate) {
        for (int i = 0; i < 128; i++) {
          set[i] = !set[i];
        }
      }
      return set;
    }

    /** An escape after its '\\'. */
    private boolean[] escape(boolean inClass) {
      if (pos >= p.length()) {
        throw new Ineligible("trailing backslash");
      }
      char e = p.charAt(pos++);
      switch (e) {
        case 'd':
          return range('0', '9');
        case 'D':
          return not(range('0', '9'));
        case 's':
          return space();
        case 'S':
          return not(space());
        case 'w':
          return word();
        case 'W':
          return not(word());
        case 't':
          return single('\t');
        case 'n':
          return single('\n');
        case 'r':
          return single('\r');
        case 'f':
          return single('\f');
        case 'a':
          return single('\u0007');
        case 'e':
          return single('\u001b');
        default:
          boolean punctuation =
              e > ' ' && e < 127 && !Character.isLetterOrDigit(e);
          if (!punctuation) {
            throw new Ineligible("escape \\" + e);
          }
          return single(e);
      }
    }
  }

  static boolean[] single(char c) {
    boolean[] set = new boolean[128];
    set[c] = true;
    return set;
  }

  static boolean[] range(int lo, int hi) {
    boolean[] set = new boolean[128];
    for (int i = lo; i <= hi; i++) {
      set[i] = true;
    }
    return set;
  }

  static boolean[] space() {
    boolean[] set = new boolean[128];
    for (char c : new char[] {' ', '\t', '\n', '\u000b', '\f', '\r'}) {
      set[c] = true;
    }
    return set;
  }

  static boolean[] word() {
    boolean[] set = range('a', 'z');
    or(set, range('A', 'Z'));
    or(set, range('0', '9'));
    set['_'] = true;
    return set;
  }

  static boolean[] not(boolean[] set) {
    boolean[] out = new boolean[128];
    for (int i = 0; i < 128; i++) {
      out[i] = !set[i];
    }
    return out;
  }

  static void or(boolean[] into, boolean[] set) {
    for (int i = 0; i < 128; i++) {
      into[i] |= set[i];
    }
  }

  // ------------------------------------------------------------------ the automaton

  /** Nodes of a Thompson automaton, compiled back to front from the parsed pattern. */
  static final class Program {
    final int[] kind = new int[MAX_NODES];
    final int[] out1 = new int[MAX_NODES];
    final int[] out2 = new int[MAX_NODES];
    final boolean[][] set = new boolean[MAX_NODES][];
    int size;
    int match;
    int entry;

    int add(int k, int a, int b, boolean[] s) {
      if (size == MAX_NODES) {
        throw new Ineligible("more than " + MAX_NODES + " states");
      }
      kind[size] = k;
      out1[size] = a;
      out2[size] = b;
      set[size] = s;
      return size++;
    }

    /** The entry node of {@code node} followed by {@code next}. */
    int compile(Node node, int next) {
      switch (node.type) {
        case 'c':
          return add(CONSUME, next, -1, node.set);
        case '^':
          return add(BEGIN, next, -1, null);
        case '$':
          return add(DOLLAR, next, -1, null);
        case 's':
          for (int i = node.parts.size() - 1; i >= 0; i--) {
            next = compile(node.parts.get(i), next);
          }
          return next;
        case 'a':
          int entry = compile(node.parts.get(node.parts.size() - 1), next);
          for (int i = node.parts.size() - 2; i >= 0; i--) {
            entry = add(SPLIT, compile(node.parts.get(i), next), entry, null);
          }
          return entry;
        default: // 'r'
          Node body = node.parts.get(0);
          int tail;
          if (node.max == -1) {
            int loop = add(SPLIT, -1, next, null);
            out1[loop] = compile(body, loop);
            tail = loop;
          } else {
            tail = next;
            for (int i = node.min; i < node.max; i++) {
              tail = add(SPLIT, compile(body, tail), next, null);
            }
          }
          for (int i = 0; i < node.min; i++) {
            tail = compile(body, tail);
          }
          return tail;
      }
    }

    /** The consuming nodes and the match reached from {@code node} without a byte. */
    long closure(int node, int positionKind) {
      long seen = 0;
      long reached = 0;
      int[] stack = new int[MAX_NODES * 2 + 2];
      int top = 0;
      stack[top++] = node;
      while (top > 0) {
        int n = stack[--top];
        if ((seen & (1L << n)) != 0) {
          continue;
        }
        seen |= 1L << n;
        switch (kind[n]) {
          case CONSUME:
          case MATCH:
            reached |= 1L << n;
            break;
          case SPLIT:
            stack[top++] = out2[n];
            stack[top++] = out1[n];
            break;
          case BEGIN:
            if ((positionKind & AT_START) != 0) {
              stack[top++] = out1[n];
            }
            break;
          default: // DOLLAR
            if ((positionKind & AT_DOLLAR) != 0) {
              stack[top++] = out1[n];
            }
            break;
        }
      }
      return reached;
    }

    long[] byBytes() {
      long[] masks = new long[128];
      for (int n = 0; n < size; n++) {
        if (kind[n] == CONSUME) {
          for (int b = 0; b < 128; b++) {
            if (set[n][b]) {
              masks[b] |= 1L << n;
            }
          }
        }
      }
      return masks;
    }
  }
}
