-- Held-out evaluations of policy versions (schemas/evaluation/v1.avsc): one row per evaluated version.
-- Same conventions as 0001/0002: Int64 ms times, where the row came from in Kafka, ReplacingMergeTree keyed by
-- the event's identity (a version evaluated again, or redelivered, collapses to one row: read with FINAL).
-- env_options stays the JSON object text the event carries (18.16 has no JSON type).
CREATE TABLE IF NOT EXISTS evaluations (
  run_id String,
  policy_version Int64,
  trained_iteration Int64,
  env_steps Int64,
  env_name String,
  env_options String,
  tasks UInt32,
  greedy_success Float64,
  mean_reward Float64,
  mean_steps Float64,
  random_success Float64,
  duration_ms Float64,
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, policy_version);
