-- Tables the sink needs beyond 0001: rollout statistics, and the event fields 0001 left out.
-- ClickHouse 18.16 has no `ALTER TABLE … ADD COLUMN IF NOT EXISTS`, so the missing fields go to companion
-- tables (same run/key columns as their parent table, joinable on them) created with CREATE TABLE IF NOT
-- EXISTS: the whole migration can run again after an interruption.
-- Same conventions as 0001: Int64 ms times, maps as parallel <name>_keys/<name>_values arrays, nullable arrays
-- as array + has_<name>, and where the row came from in Kafka. ReplacingMergeTree keyed by the event's identity,
-- so a redelivered (or producer-duplicated) event collapses to one row: count exactly with FINAL or GROUP BY the key.

-- One rollout batch (scope 'batch', group_id '') or one group of it (scope 'group').
CREATE TABLE IF NOT EXISTS rollout_stats (
  run_id String,
  scope String,
  batch_id String,
  group_id String,
  groups UInt32,
  trajectories UInt32,
  reward_mean Float64,
  reward_std Float64,
  mean_in_group_reward_std Float64,
  success_rate Float64,
  pass_at_k_keys Array(String),
  pass_at_k_values Array(Float64),
  pass_hat_k_keys Array(String),
  pass_hat_k_values Array(Float64),
  mean_length Float64,
  invalid_action_rate Float64,
  incomplete UInt32,
  dropped_groups UInt32,
  dropped_by_reason_keys Array(String),
  dropped_by_reason_values Array(Float64),
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, batch_id, scope, group_id);

-- learner_step fields missing from learner_steps; join on (run_id, step).
CREATE TABLE IF NOT EXISTS learner_step_details (
  run_id String,
  step Int64,
  clip_fraction_low Nullable(Float64),
  backend String,
  metrics_keys Array(String),
  metrics_values Array(Float64),
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, step);

-- policy_version.metrics; join on (run_id, version).
CREATE TABLE IF NOT EXISTS policy_version_metrics (
  run_id String,
  version Int64,
  metrics_keys Array(String),
  metrics_values Array(Float64),
  created_at_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(created_at_ms, 1000)))
ORDER BY (run_id, version);

-- collapse_alert.evidence; join on (run_id, alert_id).
CREATE TABLE IF NOT EXISTS collapse_alert_evidence (
  run_id String,
  alert_id String,
  evidence_keys Array(String),
  evidence_values Array(Float64),
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, alert_id);

-- trajectory.metrics; join on (run_id, group_id, episode_id). The trajectory's steps are not repeated here:
-- every step is in `steps` already.
CREATE TABLE IF NOT EXISTS trajectory_metrics (
  run_id String,
  group_id String,
  episode_id String,
  metrics_keys Array(String),
  metrics_values Array(Float64),
  last_event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(last_event_time_ms, 1000)))
ORDER BY (run_id, group_id, episode_id);

-- The token arrays of a sample, written only when the sink is configured to (includeSampleTokens);
-- `samples` always has the counts. Join on (run_id, sample_id).
CREATE TABLE IF NOT EXISTS sample_tokens (
  run_id String,
  sample_id String,
  token_ids Array(Int32),
  loss_mask Array(UInt8),
  advantages Array(Float32),
  behaviour_log_probs Array(Float32),
  has_step_advantages UInt8,
  step_advantages Array(Float32),
  event_time_ms Int64,
  kafka_topic String,
  kafka_partition Int32,
  kafka_offset Int64
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(toDateTime(intDiv(event_time_ms, 1000)))
ORDER BY (run_id, sample_id);
