package trajflow.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;

/**
 * Apache Avro's reference implementation, driven over every schema of a trajflow schemas directory
 * ({@code <schemasDir>/<event>/v<N>.avsc}; the highest N is the event's current schema).
 *
 * <pre>
 *   fingerprints &lt;schemasDir&gt; &lt;out.json&gt;
 *   decode       &lt;schemasDir&gt; &lt;inDir&gt; &lt;outDir&gt;   (&lt;event&gt;.bin  -> &lt;event&gt;.json)
 *   encode       &lt;schemasDir&gt; &lt;inDir&gt; &lt;outDir&gt;   (&lt;event&gt;.json -> &lt;event&gt;.bin)
 *   decode-lines &lt;schemasDir&gt; &lt;event&gt; &lt;in.hex&gt; &lt;out.jsonl&gt;
 * </pre>
 *
 * <p>decode-lines decodes many messages in one run: each line of {@code in.hex} is one single-object
 * encoded message in hex; each line of {@code out.jsonl} is {@code {"value": <normalized JSON>}} or
 * {@code {"error": "<why>"}} for the message on the same line (exit 0 either way; 1 on any other failure).
 *
 * <p>decode/encode go on past an event that fails: its error goes to {@code <outDir>/<event>.error}
 * and the exit code is 2. Any other failure exits 1.
 *
 * <p>The normalized JSON form: records are objects with their fields in schema order, arrays are
 * arrays, maps are objects (keys sorted), bytes and fixed are lower-case hex strings, enums their
 * symbol, unions the plain value of the branch (or null), int/long integers, float the float's
 * exact value as a double, double its exact value (NaN, Infinity, -Infinity as those strings),
 * strings strings, booleans booleans.
 */
public final class AvroInterop {
  private static final Pattern VERSION_FILE = Pattern.compile("v(\\d+)\\.avsc");
  private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);
  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private AvroInterop() {}

  /** One schema file of an event. */
  record Version(int version, Path file, Schema schema) {}

  /** An event's versions, oldest first. */
  record Event(String name, List<Version> versions) {
    Version current() {
      return versions.get(versions.size() - 1);
    }
  }

  public static void main(String[] args) {
    // Avro logs through SLF4J; with no provider bound, SLF4J 2 would warn on every run.
    System.setProperty("slf4j.internal.verbosity", "ERROR");
    try {
      System.exit(run(args));
    } catch (Exception e) {
      System.err.println("avro-interop: " + stackTrace(e));
      System.exit(1);
    }
  }

  static int run(String[] args) throws IOException {
    if (args.length < 1) return usage();
    switch (args[0]) {
      case "fingerprints":
        if (args.length != 3) return usage();
        fingerprints(loadSchemas(Paths.get(args[1])), Paths.get(args[2]));
        return 0;
      case "decode":
        if (args.length != 4) return usage();
        return decode(loadSchemas(Paths.get(args[1])), Paths.get(args[2]), Paths.get(args[3]));
      case "decode-lines":
        if (args.length != 5) return usage();
        return decodeLines(loadSchemas(Paths.get(args[1])), args[2], Paths.get(args[3]), Paths.get(args[4]));
      case "encode":
        if (args.length != 4) return usage();
        return encode(loadSchemas(Paths.get(args[1])), Paths.get(args[2]), Paths.get(args[3]));
      default:
        return usage();
    }
  }

  private static int usage() {
    System.err.println(
        "usage: AvroInterop fingerprints <schemasDir> <out.json>\n"
            + "       AvroInterop decode <schemasDir> <inDir> <outDir>\n"
            + "       AvroInterop encode <schemasDir> <inDir> <outDir>\n"
            + "       AvroInterop decode-lines <schemasDir> <event> <in.hex> <out.jsonl>");
    return 1;
  }

  // ---------------------------------------------------------------- schemas

  static Map<String, Event> loadSchemas(Path schemasDir) throws IOException {
    Map<String, Event> events = new TreeMap<>();
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(schemasDir, Files::isDirectory)) {
      for (Path dir : dirs) {
        Map<Integer, Version> versions = new TreeMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "v*.avsc")) {
          for (Path file : files) {
            Matcher m = VERSION_FILE.matcher(file.getFileName().toString());
            if (!m.matches()) continue;
            int version = Integer.parseInt(m.group(1));
            Schema schema;
            try {
              // A fresh parser per file: each .avsc must stand alone, as the TS registry expects.
              schema = new Schema.Parser().parse(file.toFile());
            } catch (RuntimeException e) {
              throw new IOException("cannot parse " + file + ": " + e.getMessage(), e);
            }
            versions.put(version, new Version(version, file, schema));
          }
        }
        if (versions.isEmpty()) continue;
        String name = dir.getFileName().toString();
        events.put(name, new Event(name, new ArrayList<>(versions.values())));
      }
    }
    if (events.isEmpty()) throw new IOException("no <event>/v<N>.avsc schemas under " + schemasDir);
    return events;
  }

  // ----------------------------------------------------------- fingerprints

  static void fingerprints(Map<String, Event> events, Path out) throws IOException {
    ObjectNode root = NODES.objectNode();
    root.put("avroVersion", avroVersion());
    ObjectNode byEvent = root.putObject("events");
    for (Event event : events.values()) {
      ObjectNode node = byEvent.putObject(event.name());
      ObjectNode current = describe(event.current());
      node.setAll(current);
      ArrayNode all = node.putArray("versions");
      for (Version v : event.versions()) all.add(describe(v));
    }
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) Files.createDirectories(parent);
    MAPPER.writeValue(out.toFile(), root);
  }

  /** Avro's version, from the pom.properties that the shaded jar carries. */
  private static String avroVersion() {
    try (var in = AvroInterop.class.getResourceAsStream("/META-INF/maven/org.apache.avro/avro/pom.properties")) {
      if (in == null) return null;
      java.util.Properties props = new java.util.Properties();
      props.load(in);
      return props.getProperty("version");
    } catch (IOException e) {
      return null;
    }
  }

  private static ObjectNode describe(Version v) {
    ObjectNode node = NODES.objectNode();
    long fp = SchemaNormalization.parsingFingerprint64(v.schema());
    byte[] le = new byte[8];
    for (int i = 0; i < 8; i++) le[i] = (byte) (fp >>> (8 * i));
    node.put("version", v.version());
    node.put("file", v.file().toString());
    node.put("fullName", v.schema().getFullName());
    node.put("canonical", SchemaNormalization.toParsingForm(v.schema()));
    node.put("fingerprintHex", String.format("%016x", fp));
    node.put("fingerprintLeHex", hex(le));
    node.put("headerHex", "c301" + hex(le));
    return node;
  }

  // ----------------------------------------------------------------- decode

  static int decode(Map<String, Event> events, Path inDir, Path outDir) throws IOException {
    Files.createDirectories(outDir);
    int failures = 0;
    for (Event event : events.values()) {
      Path in = inDir.resolve(event.name() + ".bin");
      if (!Files.exists(in)) continue;
      Path error = outDir.resolve(event.name() + ".error");
      Files.deleteIfExists(error);
      try {
        Schema reader = event.current().schema();
        // The decoder checks the C3 01 marker and resolves the writer schema by its fingerprint.
        BinaryMessageDecoder<GenericRecord> decoder =
            new BinaryMessageDecoder<>(GenericData.get(), reader);
        for (Version v : event.versions()) decoder.addSchema(v.schema());
        GenericRecord record = decoder.decode(Files.readAllBytes(in));
        JsonNode json = toJson(reader, record);
        MAPPER.writeValue(outDir.resolve(event.name() + ".json").toFile(), json);
      } catch (Exception e) {
        failures++;
        Files.writeString(error, "decode " + event.name() + ": " + stackTrace(e));
      }
    }
    return failures == 0 ? 0 : 2;
  }

  static int decodeLines(Map<String, Event> events, String name, Path in, Path out) throws IOException {
    Event event = events.get(name);
    if (event == null) throw new IOException("no event " + name + " in the schemas directory");
    Schema reader = event.current().schema();
    BinaryMessageDecoder<GenericRecord> decoder = new BinaryMessageDecoder<>(GenericData.get(), reader);
    for (Version v : event.versions()) decoder.addSchema(v.schema());
    ObjectMapper compact = new ObjectMapper();
    List<String> lines = new ArrayList<>();
    for (String line : Files.readAllLines(in)) {
      if (line.isEmpty()) continue;
      ObjectNode result = NODES.objectNode();
      try {
        result.set("value", toJson(reader, decoder.decode(unhex(NODES.textNode(line), "line"))));
      } catch (Exception e) {
        result.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
      }
      lines.add(compact.writeValueAsString(result));
    }
    Files.write(out, lines);
    return 0;
  }

  static JsonNode toJson(Schema schema, Object datum) {
    switch (schema.getType()) {
      case RECORD: {
        GenericRecord record = (GenericRecord) datum;
        ObjectNode node = NODES.objectNode();
        for (Schema.Field field : schema.getFields()) {
          node.set(field.name(), toJson(field.schema(), record.get(field.pos())));
        }
        return node;
      }
      case ARRAY: {
        ArrayNode node = NODES.arrayNode();
        for (Object item : (Collection<?>) datum) node.add(toJson(schema.getElementType(), item));
        return node;
      }
      case MAP: {
        TreeMap<String, Object> sorted = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) datum).entrySet()) {
          sorted.put(e.getKey().toString(), e.getValue());
        }
        ObjectNode node = NODES.objectNode();
        for (Map.Entry<String, Object> e : sorted.entrySet()) {
          node.set(e.getKey(), toJson(schema.getValueType(), e.getValue()));
        }
        return node;
      }
      case UNION: {
        int branch = GenericData.get().resolveUnion(schema, datum);
        return toJson(schema.getTypes().get(branch), datum);
      }
      case ENUM:
        return NODES.textNode(datum.toString());
      case FIXED:
        return NODES.textNode(hex(((GenericData.Fixed) datum).bytes()));
      case BYTES: {
        ByteBuffer buf = ((ByteBuffer) datum).duplicate();
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        return NODES.textNode(hex(bytes));
      }
      case STRING:
        return NODES.textNode(datum.toString());
      case INT:
        return NODES.numberNode((Integer) datum);
      case LONG:
        return NODES.numberNode((Long) datum);
      case FLOAT:
        return exactDouble((double) (Float) datum);
      case DOUBLE:
        return exactDouble((Double) datum);
      case BOOLEAN:
        return NODES.booleanNode((Boolean) datum);
      case NULL:
        return NODES.nullNode();
      default:
        throw new IllegalArgumentException("unsupported schema type " + schema.getType());
    }
  }

  /**
   * A decimal that any correct JSON reader turns back into this very double: Java's shortest form
   * when it reads back exactly, else the double's exact decimal value.
   */
  private static JsonNode exactDouble(double d) {
    if (Double.isNaN(d)) return NODES.textNode("NaN");
    if (Double.isInfinite(d)) return NODES.textNode(d > 0 ? "Infinity" : "-Infinity");
    if (d == 0.0) return NODES.numberNode(d); // keeps -0.0 as "-0.0"
    String shortest = Double.toString(d);
    BigDecimal value =
        Double.parseDouble(shortest) == d ? new BigDecimal(shortest) : new BigDecimal(d);
    // Always with a fraction or an exponent, so readers can tell a double from a long.
    if (value.scale() <= 0 && !value.toString().contains("E")) value = value.setScale(1);
    return NODES.numberNode(value);
  }

  // ----------------------------------------------------------------- encode

  static int encode(Map<String, Event> events, Path inDir, Path outDir) throws IOException {
    Files.createDirectories(outDir);
    int failures = 0;
    for (Event event : events.values()) {
      Path in = inDir.resolve(event.name() + ".json");
      if (!Files.exists(in)) continue;
      Path error = outDir.resolve(event.name() + ".error");
      Files.deleteIfExists(error);
      try {
        Schema schema = event.current().schema();
        JsonNode json = MAPPER.readTree(in.toFile());
        Object datum = fromJson(schema, json, event.name());
        if (!GenericData.get().validate(schema, datum)) {
          throw new IllegalArgumentException("built datum does not validate against the schema");
        }
        BinaryMessageEncoder<Object> encoder =
            new BinaryMessageEncoder<>(GenericData.get(), schema);
        ByteBuffer buf = encoder.encode(datum);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        Files.write(outDir.resolve(event.name() + ".bin"), bytes);
      } catch (Exception e) {
        failures++;
        Files.writeString(error, "encode " + event.name() + ": " + stackTrace(e));
      }
    }
    return failures == 0 ? 0 : 2;
  }

  static Object fromJson(Schema schema, JsonNode node, String path) {
    switch (schema.getType()) {
      case RECORD: {
        expect(node.isObject(), path, "an object", node);
        GenericData.Record record = new GenericData.Record(schema);
        for (Schema.Field field : schema.getFields()) {
          JsonNode value = node.get(field.name());
          String fieldPath = path + "." + field.name();
          if (value == null) {
            if (!field.hasDefaultValue()) {
              throw new IllegalArgumentException(fieldPath + ": missing and has no default");
            }
            record.put(field.pos(), GenericData.get().getDefaultValue(field));
          } else {
            record.put(field.pos(), fromJson(field.schema(), value, fieldPath));
          }
        }
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
          String name = names.next();
          if (schema.getField(name) == null) {
            throw new IllegalArgumentException(path + "." + name + ": not a field of " + schema.getFullName());
          }
        }
        return record;
      }
      case ARRAY: {
        expect(node.isArray(), path, "an array", node);
        GenericData.Array<Object> array = new GenericData.Array<>(node.size(), schema);
        int i = 0;
        for (JsonNode item : node) array.add(fromJson(schema.getElementType(), item, path + "[" + i++ + "]"));
        return array;
      }
      case MAP: {
        expect(node.isObject(), path, "an object", node);
        Map<String, Object> map = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
          Map.Entry<String, JsonNode> e = fields.next();
          map.put(e.getKey(), fromJson(schema.getValueType(), e.getValue(), path + "[" + e.getKey() + "]"));
        }
        return map;
      }
      case UNION: {
        List<Schema> branches = schema.getTypes();
        for (Schema branch : branches) {
          if (matches(branch, node)) return fromJson(branch, node, path);
        }
        throw new IllegalArgumentException(path + ": " + node + " fits no branch of " + schema);
      }
      case ENUM:
        expect(node.isTextual() && schema.hasEnumSymbol(node.asText()), path, "a symbol of " + schema.getFullName(), node);
        return new GenericData.EnumSymbol(schema, node.asText());
      case FIXED: {
        byte[] bytes = unhex(node, path);
        if (bytes.length != schema.getFixedSize()) {
          throw new IllegalArgumentException(path + ": fixed of size " + schema.getFixedSize() + ", got " + bytes.length);
        }
        return new GenericData.Fixed(schema, bytes);
      }
      case BYTES:
        return ByteBuffer.wrap(unhex(node, path));
      case STRING:
        expect(node.isTextual(), path, "a string", node);
        return node.asText();
      case INT:
        expect(node.isIntegralNumber() && node.canConvertToInt(), path, "an int", node);
        return node.intValue();
      case LONG:
        expect(node.isIntegralNumber() && node.canConvertToLong(), path, "a long", node);
        return node.longValue();
      case FLOAT: {
        double d = number(node, path);
        float f = (float) d;
        if (!Double.isNaN(d) && (double) f != d) {
          throw new IllegalArgumentException(path + ": " + node + " is not exactly a float (normalize with Math.fround)");
        }
        return f;
      }
      case DOUBLE:
        return number(node, path);
      case BOOLEAN:
        expect(node.isBoolean(), path, "a boolean", node);
        return node.booleanValue();
      case NULL:
        expect(node.isNull(), path, "null", node);
        return null;
      default:
        throw new IllegalArgumentException(path + ": unsupported schema type " + schema.getType());
    }
  }

  /** Whether a JSON value can stand for a datum of this (non-union) schema: picks union branches. */
  private static boolean matches(Schema schema, JsonNode node) {
    switch (schema.getType()) {
      case NULL:
        return node.isNull();
      case BOOLEAN:
        return node.isBoolean();
      case INT:
        return node.isIntegralNumber() && node.canConvertToInt();
      case LONG:
        return node.isIntegralNumber() && node.canConvertToLong();
      case FLOAT:
      case DOUBLE:
        return node.isNumber() || isSpecialDouble(node);
      case STRING:
        return node.isTextual();
      case BYTES:
        return node.isTextual() && node.asText().matches("([0-9a-fA-F]{2})*");
      case FIXED:
        return node.isTextual() && node.asText().length() == 2 * schema.getFixedSize();
      case ENUM:
        return node.isTextual() && schema.hasEnumSymbol(node.asText());
      case ARRAY:
        return node.isArray();
      case MAP:
        return node.isObject();
      case RECORD: {
        if (!node.isObject()) return false;
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) if (schema.getField(names.next()) == null) return false;
        for (Schema.Field f : schema.getFields()) {
          if (!node.has(f.name()) && !f.hasDefaultValue()) return false;
        }
        return true;
      }
      default:
        return false;
    }
  }

  private static boolean isSpecialDouble(JsonNode node) {
    if (!node.isTextual()) return false;
    String s = node.asText();
    return s.equals("NaN") || s.equals("Infinity") || s.equals("-Infinity");
  }

  private static double number(JsonNode node, String path) {
    if (isSpecialDouble(node)) return Double.parseDouble(node.asText());
    expect(node.isNumber(), path, "a number", node);
    return node.doubleValue();
  }

  private static void expect(boolean ok, String path, String what, JsonNode node) {
    if (!ok) throw new IllegalArgumentException(path + ": expected " + what + ", got " + node);
  }

  // ------------------------------------------------------------------ bytes

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[bytes[i] & 0xf];
    }
    return new String(out);
  }

  private static byte[] unhex(JsonNode node, String path) {
    expect(node.isTextual(), path, "a hex string", node);
    String s = node.asText();
    if (s.length() % 2 != 0 || !s.matches("[0-9a-fA-F]*")) {
      throw new IllegalArgumentException(path + ": not a hex string: " + s);
    }
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  private static String stackTrace(Throwable e) {
    StringWriter sw = new StringWriter();
    e.printStackTrace(new PrintWriter(sw));
    return sw.toString();
  }
}
