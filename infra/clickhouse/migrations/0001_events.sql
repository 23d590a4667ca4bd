-- One table per event kind, columns named after the Avro fields (trajflow.events) in snake_case.
-- Portable SQL: runs on ClickHouse 18.16 (Debian) and current releases alike, hence
--   * times are milliseconds since the epoch in Int64 (no DateTime64), partitions by month of that time;
--   * Avro maps are two parallel arrays (<name>_keys, <name>_values) (no Map type in 18.16);
--   * a nullable Avro array is an array plus a has_<name> flag (ClickHouse has no Nullable(Array)).
-- Every table records where the row came from in Kafka (kafka_topic, kafka_partition, kafka_offset) so the
-- sink can ingest idempotently. ReplacingMergeTree collapses rows with the same sorting key on merges, so a
-- redelivered event ends up stored once (query with FINAL, or GROUP BY the key, for exact counts before merges).

CREATE TABLE IF NOT EXISTS steps (
  event_id String,
  run_id String,
  env_name String,
  env_version String,
  group_id String,
  episode_id String,
  step_index UInt32,
  observation String,
  has_observation_token_ids UInt8,
  observation_token_ids Array(Int32),
  action String,
  action_token_ids Array(Int32),
  action_log_probs Array(Float32),
  policy_version Int64,
  reward Float64,
  terminated UInt8,
  truncated UInt8,
  action_valid UInt8,
  state_key Nullable(String),
  metrics_keys Array(String),
  metrics_values Array(Float64),
  info_keys Array(String),
  info_values Array(String),
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, episode_id, step_index, event_id);

CREATE TABLE IF NOT EXISTS trajectories (
  run_id String,
  env_name String,
  env_version String,
  group_id String,
  episode_id String,
  outcome Enum8('terminated' = 1, 'truncated' = 2, 'incomplete' = 3),
  step_count UInt32,
  total_reward Float64,
  success UInt8,
  invalid_actions UInt32,
  gap_count UInt32,
  min_policy_version Int64,
  max_policy_version Int64,
  first_event_time_ms Int64,
  last_event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(last_event_time_ms, 1000)))
ORDER BY (run_id, group_id, episode_id);

CREATE TABLE IF NOT EXISTS samples (
  sample_id String,
  run_id String,
  group_id String,
  episode_id String,
  policy_version Int64,
  reward Float64,
  estimator String,
  group_size UInt32,
  group_reward_mean Float64,
  group_reward_std Float64,
  token_count UInt32,
  loss_token_count UInt32,
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, sample_id);

CREATE TABLE IF NOT EXISTS learner_steps (
  run_id String,
  step Int64,
  policy_version Int64,
  total_loss Float64,
  policy_loss Float64,
  kl_loss Float64,
  entropy_loss Float64,
  entropy Float64,
  kl Float64,
  clip_fraction Float64,
  grad_norm_pre_clip Float64,
  learning_rate Float64,
  tokens Int64,
  samples Int64,
  staleness_mean Float64,
  staleness_max Float64,
  duration_ms Float64,
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, step);

CREATE TABLE IF NOT EXISTS policy_versions (
  run_id String,
  version Int64,
  weights_uri String,
  checksum String,
  parent_version Nullable(Int64),
  learner_step Int64,
  created_at_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(created_at_ms, 1000)))
ORDER BY (run_id, version);

CREATE TABLE IF NOT EXISTS collapse_alerts (
  alert_id String,
  run_id String,
  kind String,
  severity String,
  learner_step Int64,
  policy_version Int64,
  value Float64,
  threshold Float64,
  message String,
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, alert_id);

-- key and payload are Avro bytes; stored as String (ClickHouse strings are byte strings).
CREATE TABLE IF NOT EXISTS dead_letters (
  reason String,
  detail String,
  source_topic String,
  source_partition Int32,
  source_offset Int64,
  key Nullable(String),
  payload String,
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (kafka_topic, kafka_partition, kafka_offset);
