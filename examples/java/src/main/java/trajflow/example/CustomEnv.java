package trajflow.example;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A custom environment written in Java, end to end through trajflow.
 *
 * <p>LineWalk (cells 0..4, the goal at 4, actions Left and Right in RAGEN's answer tags) plays a few groups of
 * episodes; every step becomes a trajflow step event in Avro single-object encoding (BinaryMessageEncoder: the
 * bytes C3 01, the schema's 8-byte fingerprint, the datum), published with the Java client keyed by group id —
 * its default partitioner is murmur2, the partition where trajflow's processors assemble the group — and with
 * the group's size announced in info.groupSize, so the processors close each group as soon as its last episode
 * ended. Then it reads back what trajflow made of the steps: the trajectories and samples from Kafka
 * (read_committed; BinaryMessageDecoder finds each event's writer schema by its fingerprint) and the rows the
 * sink stored in ClickHouse. One JSON line per published episode, trajectory, sample and row; exit code 0 when
 * every episode came back four times, 2 otherwise.
 */
public final class CustomEnv {
  private CustomEnv() {}

  /** The environment: reset(seed) starts at seed % 3; the goal gives reward 1 and terminates; 6 turns truncate. */
  static final class LineWalk {
    static final int LENGTH = 5, GOAL = 4, MAX_TURNS = 6;
    int position;
    int turns;

    String reset(int seed) {
      position = seed % 3;
      turns = 0;
      return render();
    }

    String render() {
      StringBuilder cells = new StringBuilder();
      for (int i = 0; i < LENGTH; i++) cells.append(i == 0 ? "" : " ").append(i == position ? "A" : i == GOAL ? "G" : "_");
      return cells.toString();
    }

    String stateKey() {
      return "pos=" + position;
    }

    /** Applies an action; returns {valid, terminated, truncated}. */
    boolean[] step(String action) {
      turns++;
      int start = action.indexOf("<answer>");
      int end = action.indexOf("</answer>");
      String answer = start >= 0 && end > start ? action.substring(start + 8, end).trim() : "";
      boolean valid = answer.equals("Left") || answer.equals("Right");
      if (valid) position = Math.min(Math.max(position + (answer.equals("Right") ? 1 : -1), 0), LENGTH - 1);
      boolean terminated = position == GOAL;
      return new boolean[] {valid, terminated, !terminated && turns >= MAX_TURNS};
    }
  }

  /** Episode 0 walks right, 1 walks left (truncated), 2 stumbles once, then walks right. */
  static String scriptedPolicy(int episode, int turn) {
    if (episode % 3 == 1) return "<think>left, maybe</think><answer>Left</answer>";
    if (episode % 3 == 2 && turn == 0) return "<think>jump!</think><answer>Jump</answer>";
    return "<think>the goal is to the right</think><answer>Right</answer>";
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = options(argv);
    String bootstrap = args.getOrDefault("bootstrap", env("TRAJFLOW_KAFKA_BROKERS", "127.0.0.1:19092"));
    String prefix = args.getOrDefault("prefix", env("TRAJFLOW_TOPIC_PREFIX", "trajflow"));
    Path schemas = Path.of(args.getOrDefault("schemas", "schemas"));
    String runId = args.getOrDefault("run-id", "java-" + UUID.randomUUID().toString().substring(0, 8));
    int groups = Integer.parseInt(args.getOrDefault("groups", "2"));
    int episodes = Integer.parseInt(args.getOrDefault("episodes", "3"));
    long timeoutMs = (long) (Double.parseDouble(args.getOrDefault("timeout", "60")) * 1000);
    long startedMs = System.currentTimeMillis() - 1000;

    int published = publish(bootstrap, prefix + ".env.steps", schema(schemas, "step", 1), runId, groups, episodes);
    int trajectories = readBack(bootstrap, prefix + ".trajectories", runId, published, startedMs, timeoutMs,
        decoder(schemas, "trajectory", 1), CustomEnv::trajectoryLine);
    int samples = readBack(bootstrap, prefix + ".samples", runId, published, startedMs, timeoutMs,
        decoder(schemas, "sample", 2), CustomEnv::sampleLine);
    int trajectoryRows = clickHouseRows("trajectories",
        "SELECT episode_id, group_id, outcome, step_count, total_reward, success FROM trajectories FINAL WHERE run_id = {run} ORDER BY episode_id",
        runId, published, timeoutMs);
    int sampleRows = clickHouseRows("samples",
        "SELECT episode_id, group_id, group_size, reward, estimator, token_count, loss_token_count FROM samples FINAL WHERE run_id = {run} ORDER BY episode_id",
        runId, published, timeoutMs);
    System.err.printf("read back %d trajectories and %d samples from Kafka, %d trajectory and %d sample rows from ClickHouse (%d episodes published)%n",
        trajectories, samples, trajectoryRows, sampleRows, published);
    boolean all = trajectories == published && samples == published && trajectoryRows == published && sampleRows == published;
    System.exit(all ? 0 : 2);
  }

  /** Plays and publishes every episode; returns how many. */
  static int publish(String bootstrap, String topic, Schema stepSchema, String runId, int groups, int episodes) throws Exception {
    BinaryMessageEncoder<GenericRecord> encoder = new BinaryMessageEncoder<>(GenericData.get(), stepSchema);
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    int count = 0;
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
      LineWalk env = new LineWalk();
      for (int group = 0; group < groups; group++) {
        String groupId = runId + "-g" + group;
        for (int episode = 0; episode < episodes; episode++) {
          String episodeId = groupId + "-e" + episode;
          List<GenericRecord> steps = playEpisode(env, stepSchema, runId, groupId, episodeId, 100 + group, episode, episodes);
          // Keyed by group id: the Java client's default partitioner (murmur2) puts a group on one partition,
          // the one trajflow's processors assemble it on.
          for (GenericRecord step : steps) {
            ByteBuffer bytes = encoder.encode(step);
            byte[] value = new byte[bytes.remaining()];
            bytes.get(value);
            producer.send(new ProducerRecord<>(topic, groupId, value)).get();
          }
          double total = steps.stream().mapToDouble(s -> (Double) s.get("reward")).sum();
          GenericRecord last = steps.get(steps.size() - 1);
          System.out.println("{\"kind\":\"published\",\"groupId\":" + json(groupId) + ",\"episodeId\":" + json(episodeId) + ",\"steps\":" + steps.size()
              + ",\"totalReward\":" + total + ",\"terminated\":" + last.get("terminated") + ",\"truncated\":" + last.get("truncated") + "}");
          count++;
        }
      }
      producer.flush();
    }
    return count;
  }

  /** One episode's step events, each holding the observation and state key from before its action. */
  static List<GenericRecord> playEpisode(LineWalk env, Schema schema, String runId, String groupId, String episodeId, int seed, int episode, int groupSize) {
    List<GenericRecord> steps = new ArrayList<>();
    String observation = env.reset(seed);
    String stateKey = env.stateKey();
    for (int turn = 0; turn < LineWalk.MAX_TURNS; turn++) {
      String action = scriptedPolicy(episode, turn);
      boolean[] outcome = env.step(action);
      boolean valid = outcome[0], terminated = outcome[1], truncated = outcome[2];
      byte[] utf8 = action.getBytes(StandardCharsets.UTF_8);
      // Stand-ins for the policy's sampled tokens and their log-probs (a real policy reports its own).
      List<Integer> tokenIds = new ArrayList<>();
      List<Float> logProbs = new ArrayList<>();
      for (byte b : utf8) {
        tokenIds.add(b & 0xff);
        logProbs.add(-0.05f);
      }
      Map<String, Double> metrics = new HashMap<>();
      if (terminated || truncated) metrics.put("success", terminated ? 1.0 : 0.0);
      Map<String, String> info = new HashMap<>();
      // The group's size, the same on every step of the group: the processors close it once that many ended.
      info.put("groupSize", Integer.toString(groupSize));
      if (!valid) info.put("problem", "unknown action");
      GenericRecord step = new GenericData.Record(schema);
      step.put("eventId", UUID.randomUUID().toString());
      step.put("runId", runId);
      step.put("envName", "LineWalk");
      step.put("envVersion", "v1");
      step.put("groupId", groupId);
      step.put("episodeId", episodeId);
      step.put("stepIndex", turn);
      step.put("observation", observation);
      step.put("observationTokenIds", null);
      step.put("action", action);
      step.put("actionTokenIds", tokenIds);
      step.put("actionLogProbs", logProbs);
      step.put("policyVersion", 0L);
      step.put("reward", terminated ? 1.0 : 0.0);
      step.put("terminated", terminated);
      step.put("truncated", truncated);
      step.put("actionValid", valid);
      step.put("stateKey", stateKey);
      step.put("metrics", metrics);
      step.put("info", info);
      step.put("eventTimeMs", System.currentTimeMillis());
      steps.add(step);
      observation = env.render();
      stateKey = env.stateKey();
      if (terminated || truncated) break;
    }
    return steps;
  }

  interface LineOf {
    String line(GenericRecord event);
  }

  /** Reads `topic` from `sinceMs` until `expected` events of the run arrived (or the timeout); prints each. */
  static int readBack(String bootstrap, String topic, String runId, int expected, long sinceMs, long timeoutMs,
      BinaryMessageDecoder<GenericRecord> decoder, LineOf lineOf) throws IOException {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    // The processors write in transactions: read only what committed.
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    int found = 0;
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).collect(Collectors.toList());
      consumer.assign(partitions);
      // The end offsets before the times: a partition with nothing since sinceMs yet starts where its end was
      // then. seekToEnd is evaluated lazily, at the first poll, and skipped what was written in between.
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      Map<TopicPartition, Long> since = new HashMap<>();
      for (TopicPartition partition : partitions) since.put(partition, sinceMs);
      Map<TopicPartition, OffsetAndTimestamp> offsets = consumer.offsetsForTimes(since);
      for (TopicPartition partition : partitions) {
        OffsetAndTimestamp at = offsets.get(partition);
        consumer.seek(partition, at == null ? ends.get(partition) : at.offset());
      }
      long deadline = System.currentTimeMillis() + timeoutMs;
      while (found < expected && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          GenericRecord event = decoder.decode(record.value());
          if (!runId.equals(event.get("runId").toString())) continue;
          System.out.println(lineOf.line(event));
          found++;
        }
      }
    }
    return found;
  }

  static String trajectoryLine(GenericRecord t) {
    return "{\"kind\":\"trajectory\",\"episodeId\":" + json(t.get("episodeId").toString()) + ",\"groupId\":" + json(t.get("groupId").toString())
        + ",\"outcome\":" + json(t.get("outcome").toString()) + ",\"stepCount\":" + t.get("stepCount") + ",\"totalReward\":" + t.get("totalReward")
        + ",\"success\":" + t.get("success") + "}";
  }

  static String sampleLine(GenericRecord s) {
    @SuppressWarnings("unchecked")
    List<Integer> mask = (List<Integer>) s.get("lossMask");
    return "{\"kind\":\"sample\",\"episodeId\":" + json(s.get("episodeId").toString()) + ",\"groupId\":" + json(s.get("groupId").toString())
        + ",\"groupSize\":" + s.get("groupSize") + ",\"reward\":" + s.get("reward") + ",\"estimator\":" + json(s.get("estimator").toString())
        + ",\"tokens\":" + mask.size() + ",\"lossTokens\":" + mask.stream().mapToInt(Integer::intValue).sum() + "}";
  }

  /** Rows of a ClickHouse query (JSONEachRow over HTTP) once there are `expected` of them; prints each. */
  static int clickHouseRows(String table, String sql, String runId, int expected, long timeoutMs) throws Exception {
    String base = env("TRAJFLOW_CLICKHOUSE_URL", "http://127.0.0.1:" + env("TRAJFLOW_CLICKHOUSE_HTTP_PORT", "18123"));
    String query = sql.replace("{run}", "'" + runId.replace("\\", "\\\\").replace("'", "\\'") + "'") + " FORMAT JSONEachRow";
    String url = base + "/?database=" + URLEncoder.encode(env("TRAJFLOW_CLICKHOUSE_DB", "trajflow"), StandardCharsets.UTF_8)
        + "&query=" + URLEncoder.encode(query, StandardCharsets.UTF_8);
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
    String user = System.getenv("TRAJFLOW_CLICKHOUSE_USER");
    if (user != null && !user.isEmpty()) {
      request.header("X-ClickHouse-User", user).header("X-ClickHouse-Key", env("TRAJFLOW_CLICKHOUSE_PASSWORD", ""));
    }
    HttpClient client = HttpClient.newHttpClient();
    long deadline = System.currentTimeMillis() + timeoutMs;
    List<String> rows;
    while (true) {
      HttpResponse<String> response = client.send(request.GET().build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) throw new IOException("ClickHouse answered " + response.statusCode() + ": " + response.body());
      rows = response.body().lines().filter(line -> !line.isEmpty()).collect(Collectors.toList());
      if (rows.size() >= expected || System.currentTimeMillis() > deadline) break;
      Thread.sleep(250);
    }
    for (String row : rows) System.out.println("{\"kind\":\"row\",\"table\":" + json(table) + "," + row.substring(1));
    return rows.size();
  }

  static Schema schema(Path schemas, String event, int version) throws IOException {
    return new Schema.Parser().parse(Files.readString(schemas.resolve(event).resolve("v" + version + ".avsc")));
  }

  /** A decoder into the event's version `current` that also reads every older version (found by fingerprint). */
  static BinaryMessageDecoder<GenericRecord> decoder(Path schemas, String event, int current) throws IOException {
    BinaryMessageDecoder<GenericRecord> decoder = new BinaryMessageDecoder<>(GenericData.get(), schema(schemas, event, current));
    for (int version = 1; version < current; version++) decoder.addSchema(schema(schemas, event, version));
    return decoder;
  }

  static Map<String, String> options(String[] argv) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) {
      if (!argv[i].startsWith("--")) throw new IllegalArgumentException("expected --option value, got " + argv[i]);
      options.put(argv[i].substring(2), argv[i + 1]);
    }
    return options;
  }

  static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  static String json(String value) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : value.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }
}
