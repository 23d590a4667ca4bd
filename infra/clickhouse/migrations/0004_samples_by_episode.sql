-- The trajectory inspector (GET /v1/runs/:runId/trajectories/:episodeId) reads an episode's samples by
-- (run_id, episode_id), but `samples` is sorted by (run_id, sample_id): its FINAL read every sample of the run
-- (1.7–17 s on a 330k-step run, once past the 10 s query limit). ClickHouse 18.16 has no projections, so the
-- samples are kept a second time in a table sorted for the inspector, filled by a materialized view on every
-- insert into `samples` (the sink's inserts, a bench's INSERT … SELECT), and filled once from what `samples`
-- already holds. Same columns as `samples`; ReplacingMergeTree on (run_id, episode_id, sample_id) collapses
-- the copies a re-insert (or the backfill below racing the view) makes: read it with FINAL, as `samples`.
-- Every statement may run again after an interruption (IF NOT EXISTS; a second backfill only adds copies).

CREATE TABLE IF NOT EXISTS samples_by_episode (
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
ORDER BY (run_id, episode_id, sample_id);

-- Created before the backfill: a sample inserted in between is copied by the view (and maybe by the backfill
-- too, which FINAL collapses), never missed.
CREATE MATERIALIZED VIEW IF NOT EXISTS samples_by_episode_mv TO samples_by_episode AS
SELECT sample_id, run_id, group_id, episode_id, policy_version, reward, estimator, group_size, group_reward_mean, group_reward_std,
  token_count, loss_token_count, event_time_ms, kafka_topic, kafka_partition, kafka_offset
FROM samples;

INSERT INTO samples_by_episode (sample_id, run_id, group_id, episode_id, policy_version, reward, estimator, group_size, group_reward_mean,
  group_reward_std, token_count, loss_token_count, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT sample_id, run_id, group_id, episode_id, policy_version, reward, estimator, group_size, group_reward_mean, group_reward_std,
  token_count, loss_token_count, event_time_ms, kafka_topic, kafka_partition, kafka_offset
FROM samples;
