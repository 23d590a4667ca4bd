// Synthetic analytics data for `bench queries`, generated inside ClickHouse with INSERT … SELECT … FROM
// numbers(N) (no row goes through Node). Every value is a function of the row number (intHash32 of it), so
// a layout always gives the same rows, and the tables agree with each other the way the sink's would:
//
//  - runs of equal size; each run is groups of 8 episodes (one task, 8 rollouts) of 5–10 steps (the lengths
//    [5, 7, 9, 6, 10, 8, 5, 10] rotated by group, 60 steps a group), 16 groups a rollout batch (iteration);
//  - ids as the actors make them: `<run>/g<j>`, `<run>/g<j>/e<k>`, `<run>/g<j>/e<k>/s<i>`;
//  - a step: an observation of a few dozen characters with 18–24 prompt token ids, an action with 16–24 token
//    ids and as many log-probs, the batch's policy version, reward 1 on the last step of a successful episode
//    (success rate rising from 15 % to 85 % over the run), 10 % invalid actions;
//  - runs start staggered over the first 6 of the last 29 days and end half an hour before generation;
//  - trajectories (+ metrics) and samples (counts only, as the sink stores them by default): one per episode,
//    from the same formulas; rollout_stats: one 'group' row per group (its exact success count, pass@k,
//    pass^k), one 'batch' row per iteration pooled from them; learner_steps (+ details) and policy_versions:
//    one per iteration; about a dozen collapse alerts (+ evidence) per run; dead letters over the last 20 h.
import type { ClickHouseHttp } from '../infra/clickhouse/http.js';

export const GROUP_SIZE = 8;
export const EPISODE_LENGTHS = [5, 7, 9, 6, 10, 8, 5, 10] as const;
export const STEPS_PER_GROUP = EPISODE_LENGTHS.reduce((a, b) => a + b, 0);
export const GROUPS_PER_BATCH = 16;
export const DEAD_LETTERS = 300;
/** Bump when the generated data changes: a kept database of another version is regenerated. */
export const DATA_VERSION = 1;
/**
 * Step rows per INSERT (a few parts each; progress between them). Small enough that one INSERT answers well
 * within fetch's 300 s wait for response headers even on a busy machine, where a 1M-row INSERT can outlast it
 * (docs/results/benchmarks.md#bench-queries).
 */
export const STEP_CHUNK = 250_000;

const DAY_MS = 86_400_000;
const ENVS = ['FrozenLake', 'Sokoban', 'ToolUse', 'Bandit'] as const;
const OBSERVATIONS = [
  'Frozen lake 4x4: S start, F frozen, H hole, G goal; you are on cell ',
  'Sokoban 6x6: push the box onto the target; the box is next to cell ',
  'Calculator tool ready, reach the target number; the running total is ',
  'Two-armed bandit: pick an arm to pull; your last pull paid out on arm ',
] as const;
const ACTIONS = [
  ['Left', 'Down', 'Right', 'Up'],
  ['Left', 'Down', 'Right', 'Up'],
  ['add 3', 'mul 2', 'sub 1', 'submit'],
  ['arm 0', 'arm 1', 'arm 1', 'arm 0'],
] as const;
const KS = [1, 2, 4, 8] as const;
const ALERT_KINDS = ['entropy_collapse', 'grad_norm_spike', 'reward_variance_cliff', 'invalid_action_rise'] as const;
const DEAD_LETTER_REASONS = ['invalid-value', 'bad-marker', 'schema-mismatch', 'too-large'] as const;

export interface Layout {
  readonly requestedRows: number;
  readonly runs: number;
  readonly groupsPerRun: number;
  readonly batchesPerRun: number;
  /** Step rows generated: requestedRows rounded up to whole groups in every run. */
  readonly steps: number;
  readonly episodes: number;
  /** The time the data is anchored to (generation time). */
  readonly nowMs: number;
  readonly runIds: readonly string[];
  readonly runStartMs: readonly number[];
  readonly runSpanMs: readonly number[];
  /** An alert every this many batches of each run (about a dozen per run). */
  readonly alertEvery: number;
}

export function planLayout(requestedRows: number, runs: number, nowMs: number): Layout {
  const groupsPerRun = Math.max(1, Math.ceil(requestedRows / (runs * STEPS_PER_GROUP)));
  const batchesPerRun = Math.ceil(groupsPerRun / GROUPS_PER_BATCH);
  const anchor = Math.floor(nowMs / 1000) * 1000;
  const width = Math.max(2, String(runs - 1).length);
  const runIds = Array.from({ length: runs }, (_, r) => `bench-run-${String(r).padStart(width, '0')}`);
  const runStartMs = runIds.map((_, r) => anchor - 29 * DAY_MS + Math.floor((r * 6 * DAY_MS) / runs / 1000) * 1000);
  const runSpanMs = runStartMs.map((start, r) => anchor - 30 * 60_000 - r * 60_000 - start);
  return {
    requestedRows,
    runs,
    groupsPerRun,
    batchesPerRun,
    steps: groupsPerRun * runs * STEPS_PER_GROUP,
    episodes: groupsPerRun * runs * GROUP_SIZE,
    nowMs: anchor,
    runIds,
    runStartMs,
    runSpanMs,
    alertEvery: Math.max(1, Math.floor(batchesPerRun / 12)),
  };
}

/** What identifies a layout's data, for deciding whether a kept database can be reused. */
export const layoutKey = (layout: Layout): string =>
  JSON.stringify({ version: DATA_VERSION, rows: layout.requestedRows, runs: layout.runs, lengths: EPISODE_LENGTHS, batch: GROUPS_PER_BATCH });

/**
 * 0, naming columns a lambda captures: 18.16 drops a subquery's column that only a lambda uses ("Unknown
 * identifier"), so every captured column is also named outside the lambda, in ignore().
 */
const captured = (...columns: string[]): string => `ignore(${columns.join(', ')})`;

const list = (xs: readonly (number | string)[]): string => `[${xs.map((x) => (typeof x === 'number' ? String(x) : `'${x}'`)).join(', ')}]`;

/** Lookup arrays over (rotation, offset in group): the episode and step index of each of a group's 60 steps. */
function groupTables(): { episodeOf: number[]; stepOf: number[]; lengthOf: number[]; startOf: number[] } {
  const episodeOf: number[] = [];
  const stepOf: number[] = [];
  const lengthOf: number[] = [];
  const startOf: number[] = [];
  for (let rot = 0; rot < GROUP_SIZE; rot++) {
    let start = 0;
    for (let k = 0; k < GROUP_SIZE; k++) {
      const length = EPISODE_LENGTHS[(k + rot) % GROUP_SIZE]!;
      lengthOf.push(length);
      startOf.push(start);
      for (let i = 0; i < length; i++) {
        episodeOf.push(k);
        stepOf.push(i);
      }
      start += length;
    }
  }
  return { episodeOf, stepOf, lengthOf, startOf };
}

const binomial = (n: number, k: number): number => {
  if (k < 0 || k > n) return 0;
  let c = 1;
  for (let t = 0; t < k; t++) c = (c * (n - t)) / (t + 1);
  return c;
};

/** Unbiased pass@k and pass^k of a group of 8 with c successes, indexed [k][c]. */
const passAt = (k: number): number[] => Array.from({ length: GROUP_SIZE + 1 }, (_, c) => 1 - binomial(GROUP_SIZE - c, k) / binomial(GROUP_SIZE, k));
const passHat = (k: number): number[] => Array.from({ length: GROUP_SIZE + 1 }, (_, c) => binomial(c, k) / binomial(GROUP_SIZE, k));

/** SQL fragments shared by the statements; `r` is the run index, `j` the group index within the run. */
class Sql {
  private readonly tables = groupTables();
  constructor(readonly layout: Layout) {}

  get gpr(): number {
    return this.layout.groupsPerRun;
  }
  runId(r: string): string {
    return `${list(this.layout.runIds)}[${r} + 1]`;
  }
  env(r: string): string {
    return `${list([...ENVS])}[${r} % ${ENVS.length} + 1]`;
  }
  groupId(r: string, j: string): string {
    return `concat(${this.runId(r)}, '/g', toString(${j}))`;
  }
  /** The time a group starts, ms. */
  groupTime(r: string, j: string): string {
    return `(${list(this.layout.runStartMs)}[${r} + 1] + intDiv(${j} * ${list(this.layout.runSpanMs)}[${r} + 1], ${this.gpr}))`;
  }
  /** Whether episode `ep` (global number) of group j succeeds: 15 % early in the run, 85 % at its end. */
  success(ep: string, j: string): string {
    return `(intHash32(${ep} + 1) % 1000 < 150 + intDiv(700 * ${j}, ${this.gpr}))`;
  }
  /** Successes in global group g (group index j within its run). */
  groupSuccesses(g: string, j: string): string {
    return `(arraySum(arrayMap(x -> ${this.success(`${g} * ${GROUP_SIZE} + x`, j)}, range(${GROUP_SIZE}))) + ${captured(g, j)})`;
  }
  /** Whether step n (global number) is an invalid action. */
  invalid(n: string): string {
    return `(intHash32(${n} + 3) % 10 = 0)`;
  }
  /** A step's time: its group's start, 1.5 s a turn, episodes of a group 37 ms apart, up to 0.2 s jitter. */
  stepTime(r: string, j: string, i: string, k: string, n: string): string {
    return `(${this.groupTime(r, j)} + ${i} * 1500 + ${k} * 37 + intHash32(${n} + 5) % 200)`;
  }
  /** The time of batch b's stats: 20 s after its last group started. */
  batchTime(r: string, b: string): string {
    return `(${this.groupTime(r, `least(${b} * ${GROUPS_PER_BATCH} + ${GROUPS_PER_BATCH - 1}, ${this.gpr - 1})`)} + 20000)`;
  }
  episodeOf(rot: string, o: string): string {
    return `${list(this.tables.episodeOf)}[${rot} * ${STEPS_PER_GROUP} + ${o} + 1]`;
  }
  stepOf(rot: string, o: string): string {
    return `${list(this.tables.stepOf)}[${rot} * ${STEPS_PER_GROUP} + ${o} + 1]`;
  }
  lengthOf(rot: string, k: string): string {
    return `${list(this.tables.lengthOf)}[${rot} * ${GROUP_SIZE} + ${k} + 1]`;
  }
  startOf(rot: string, k: string): string {
    return `${list(this.tables.startOf)}[${rot} * ${GROUP_SIZE} + ${k} + 1]`;
  }
}

/** Step rows [from, from + count) of the layout. */
export function stepsSql(layout: Layout, from: number, count: number): string {
  const s = new Sql(layout);
  const envIndex = `r % ${ENVS.length}`;
  return `INSERT INTO steps (event_id, run_id, env_name, env_version, group_id, episode_id, step_index, observation, has_observation_token_ids,
  observation_token_ids, action, action_token_ids, action_log_probs, policy_version, reward, terminated, truncated, action_valid, state_key,
  metrics_keys, metrics_values, info_keys, info_values, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT concat(episode_id, '/s', toString(i)), run_id, env_name, 'v1', group_id, episode_id, toUInt32(i),
  concat('Turn ', toString(i + 1), '. ', ${list([...OBSERVATIONS])}[${envIndex} + 1], toString(intHash32(n + 4) % 16), '.'), 1,
  arrayMap(x -> toInt32(5 + intHash32(n * 64 + x) % 508), range(toUInt32(18 + intHash32(n + 7) % 7))),
  concat('<answer>', ${list(ACTIONS.flat())}[${envIndex} * 4 + intHash32(n + 6) % 4 + 1], '</answer>'),
  arrayMap(x -> toInt32(261 + intHash32(n * 64 + 32 + x) % 252), range(action_tokens)),
  arrayMap(x -> toFloat32(-toFloat64(intHash32(n * 64 + 16 + x) % 3000) / 1000), range(action_tokens)),
  toInt64(b), if(last AND success, 1., 0.), terminated, last AND NOT terminated, NOT ${s.invalid('n')},
  concat('pos=', toString(intHash32(n + 4) % 16)),
  ['latencyMs'], [toFloat64(20 + intHash32(n + 9) % 400)], emptyArrayString(), emptyArrayString(),
  toInt64(${s.stepTime('r', 'j', 'i', 'k', 'n')}), 'bench.env.steps', toInt32(g % 8), toInt64(n)
FROM (
  SELECT number + ${from} AS n, intDiv(n, ${STEPS_PER_GROUP}) AS g, n % ${STEPS_PER_GROUP} AS o, intDiv(g, ${s.gpr}) AS r, g % ${s.gpr} AS j,
    g % ${GROUP_SIZE} AS rot, intDiv(j, ${GROUPS_PER_BATCH}) AS b, ${s.episodeOf('rot', 'o')} AS k, ${s.stepOf('rot', 'o')} AS i,
    ${s.lengthOf('rot', 'k')} AS len, g * ${GROUP_SIZE} + k AS ep, ${s.success('ep', 'j')} AS success, i + 1 = len AS last,
    last AND (success OR intHash32(ep + 2) % 3 = 0) AS terminated, toUInt32(16 + intHash32(n + 8) % 9) AS action_tokens,
    ${s.runId('r')} AS run_id, ${s.env('r')} AS env_name, ${s.groupId('r', 'j')} AS group_id, concat(group_id, '/e', toString(k)) AS episode_id
  FROM numbers(${count})
)`;
}

/** The per-episode columns every episode table is built from, for episodes [from, from + count). */
function episodesFrom(layout: Layout, from: number, count: number): string {
  const s = new Sql(layout);
  return `(
  SELECT number + ${from} AS ep, intDiv(ep, ${GROUP_SIZE}) AS g, ep % ${GROUP_SIZE} AS k, intDiv(g, ${s.gpr}) AS r, g % ${s.gpr} AS j,
    g % ${GROUP_SIZE} AS rot, intDiv(j, ${GROUPS_PER_BATCH}) AS b, ${s.lengthOf('rot', 'k')} AS len,
    g * ${STEPS_PER_GROUP} + ${s.startOf('rot', 'k')} AS n0, ${s.success('ep', 'j')} AS success,
    success OR intHash32(ep + 2) % 3 = 0 AS terminated,
    toInt64(${s.stepTime('r', 'j', '0', 'k', 'n0')}) AS first_ms, toInt64(${s.stepTime('r', 'j', '(len - 1)', 'k', '(n0 + len - 1)')}) AS last_ms,
    ${s.runId('r')} AS run_id, ${s.env('r')} AS env_name, ${s.groupId('r', 'j')} AS group_id, concat(group_id, '/e', toString(k)) AS episode_id
  FROM numbers(${count})
)`;
}

export function trajectoriesSql(layout: Layout, from: number, count: number): string {
  const s = new Sql(layout);
  return `INSERT INTO trajectories (run_id, env_name, env_version, group_id, episode_id, outcome, step_count, total_reward, success, invalid_actions,
  gap_count, min_policy_version, max_policy_version, first_event_time_ms, last_event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, env_name, 'v1', group_id, episode_id,
  CAST(if(terminated, 'terminated', 'truncated') AS Enum8('terminated' = 1, 'truncated' = 2, 'incomplete' = 3)),
  toUInt32(len), toFloat64(success), success, toUInt32(invalid), toUInt32(0), toInt64(b), toInt64(b), first_ms, last_ms,
  'bench.trajectories', toInt32(g % 8), toInt64(ep)
FROM (
  SELECT *, arraySum(arrayMap(x -> ${s.invalid('n0 + x')}, range(toUInt32(len)))) + ${captured('n0')} AS invalid FROM ${episodesFrom(layout, from, count)}
)`;
}

export function trajectoryMetricsSql(layout: Layout, from: number, count: number): string {
  return `INSERT INTO trajectory_metrics (run_id, group_id, episode_id, metrics_keys, metrics_values, last_event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, group_id, episode_id, ['durationMs'], [toFloat64(last_ms - first_ms)], last_ms, 'bench.trajectories', toInt32(g % 8), toInt64(ep)
FROM ${episodesFrom(layout, from, count)}`;
}

/** One GRPO sample per episode, counts only (the sink's default: no token arrays). */
export function samplesSql(layout: Layout, from: number, count: number): string {
  const s = new Sql(layout);
  return `INSERT INTO samples (sample_id, run_id, group_id, episode_id, policy_version, reward, estimator, group_size, group_reward_mean,
  group_reward_std, token_count, loss_token_count, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT concat(episode_id, '/grpo'), run_id, group_id, episode_id, toInt64(b), toFloat64(success), 'grpo', toUInt32(${GROUP_SIZE}), c / ${GROUP_SIZE},
  sqrt(c * (${GROUP_SIZE} - c) / ${GROUP_SIZE * (GROUP_SIZE - 1)}), toUInt32(len * 42), toUInt32(len * 20), last_ms + 300,
  'bench.samples', toInt32(g % 8), toInt64(ep)
FROM (SELECT *, ${s.groupSuccesses('g', 'j')} AS c FROM ${episodesFrom(layout, from, count)})`;
}

/** One 'group' row per group: its exact success count, pass@k and pass^k (unbiased, n = 8), invalid-action rate. */
export function groupStatsSql(layout: Layout): string {
  const s = new Sql(layout);
  const at = KS.map((k) => `${list(passAt(k))}[c + 1]`).join(', ');
  const hat = KS.map((k) => `${list(passHat(k))}[c + 1]`).join(', ');
  return `INSERT INTO rollout_stats (run_id, scope, batch_id, group_id, groups, trajectories, reward_mean, reward_std, mean_in_group_reward_std,
  success_rate, pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values, mean_length, invalid_action_rate, incomplete,
  dropped_groups, dropped_by_reason_keys, dropped_by_reason_values, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, 'group', concat(run_id, '/b', toString(b)), ${s.groupId('r', 'j')}, toUInt32(1), toUInt32(${GROUP_SIZE}), c / ${GROUP_SIZE},
  sqrt(c * (${GROUP_SIZE} - c) / ${GROUP_SIZE * (GROUP_SIZE - 1)}) AS std, std, c / ${GROUP_SIZE},
  ${list(KS.map(String))}, [${at}], ${list(KS.map(String))}, [${hat}], ${STEPS_PER_GROUP / GROUP_SIZE},
  (arraySum(arrayMap(x -> ${s.invalid(`g * ${STEPS_PER_GROUP} + x`)}, range(${STEPS_PER_GROUP}))) + ${captured('g')}) / ${STEPS_PER_GROUP}, toUInt32(0),
  toUInt32(0), emptyArrayString(), emptyArrayFloat64(), toInt64(${s.groupTime('r', 'j')} + 16000), 'bench.rollout.stats', toInt32(0), toInt64(g)
FROM (
  SELECT number AS g, intDiv(g, ${s.gpr}) AS r, g % ${s.gpr} AS j, intDiv(j, ${GROUPS_PER_BATCH}) AS b, ${s.runId('r')} AS run_id,
    ${s.groupSuccesses('g', 'j')} AS c
  FROM numbers(${layout.runs * layout.groupsPerRun})
)`;
}

/** One 'batch' row per iteration, pooled from its group rows (GRPO drops the groups whose rewards are all equal). */
export function batchStatsSql(): string {
  return `INSERT INTO rollout_stats (run_id, scope, batch_id, group_id, groups, trajectories, reward_mean, reward_std, mean_in_group_reward_std,
  success_rate, pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values, mean_length, invalid_action_rate, incomplete,
  dropped_groups, dropped_by_reason_keys, dropped_by_reason_values, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, 'batch', batch_id, '', toUInt32(count()), toUInt32(sum(trajectories)) AS n, sum(reward_mean * trajectories) / n AS p,
  sqrt(p * (1 - p) * n / (n - 1)), avg(reward_std), p, any(pass_at_k_keys), avgForEach(pass_at_k_values), any(pass_hat_k_keys),
  avgForEach(pass_hat_k_values), avg(mean_length), avg(invalid_action_rate), toUInt32(0), toUInt32(countIf(reward_std = 0)) AS dropped,
  if(dropped > 0, ['variance:flat'], emptyArrayString()), if(dropped > 0, [toFloat64(dropped)], emptyArrayFloat64()),
  max(event_time_ms) + 4000, 'bench.rollout.stats', toInt32(1), toInt64(min(kafka_offset))
FROM rollout_stats
WHERE scope = 'group'
GROUP BY run_id, batch_id`;
}

/** The per-iteration columns of the learner-side tables. */
function iterationsFrom(layout: Layout): string {
  const s = new Sql(layout);
  return `(
  SELECT number AS x, intDiv(x, ${layout.batchesPerRun}) AS r, x % ${layout.batchesPerRun} AS b, b / ${layout.batchesPerRun} AS progress,
    ${s.runId('r')} AS run_id, toInt64(${s.batchTime('r', 'b')} + 8000) AS learner_ms,
    least(${GROUPS_PER_BATCH}, ${layout.groupsPerRun} - b * ${GROUPS_PER_BATCH}) * ${GROUP_SIZE} AS samples
  FROM numbers(${layout.runs * layout.batchesPerRun})
)`;
}

const noise = (seed: string, scale: number): string => `((toFloat64(intHash32(x * 16 + ${seed}) % 2001) - 1000) / 1000 * ${scale})`;

export function learnerStepsSql(layout: Layout): string {
  return `INSERT INTO learner_steps (run_id, step, policy_version, total_loss, policy_loss, kl_loss, entropy_loss, entropy, kl, clip_fraction,
  grad_norm_pre_clip, learning_rate, tokens, samples, staleness_mean, staleness_max, duration_ms, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, toInt64(b), toInt64(b + 1), policy + kl_loss + entropy_loss, policy, kl_loss, entropy_loss, entropy, kl,
  0.12 + ${noise('4', 0.05)}, grad_norm, 0.0001, toInt64(samples * 315), toInt64(samples), 0.3 + ${noise('5', 0.2)}, 1., 900 + ${noise('6', 300)},
  learner_ms, 'bench.learner.steps', toInt32(0), toInt64(x)
FROM (
  SELECT *, 0.05 * ${noise('1', 1)} AS policy, 1.3 * exp(-1.5 * progress) + ${noise('2', 0.05)} AS entropy, 0.01 * entropy AS entropy_loss,
    0.002 + 0.01 * progress + ${noise('3', 0.001)} AS kl, 0.001 * kl AS kl_loss,
    if(intHash32(x + 7) % 97 = 0, 6.5, 1 + ${noise('7', 0.2)}) AS grad_norm
  FROM ${iterationsFrom(layout)}
)`;
}

export function learnerStepDetailsSql(layout: Layout): string {
  return `INSERT INTO learner_step_details (run_id, step, clip_fraction_low, backend, metrics_keys, metrics_values, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, toInt64(b), 0.02 + ${noise('8', 0.01)}, 'wasm', ['importanceWeightMax', 'importanceWeightMean', 'tokensPerSecond'],
  [1.5 + ${noise('9', 0.3)}, 1 + ${noise('10', 0.02)}, 4000 + ${noise('11', 400)}], learner_ms, 'bench.learner.steps', toInt32(0), toInt64(x)
FROM ${iterationsFrom(layout)}`;
}

export function policyVersionsSql(layout: Layout): string {
  return `INSERT INTO policy_versions (run_id, version, weights_uri, checksum, parent_version, learner_step, created_at_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, toInt64(b + 1), concat('file:///var/lib/trajflow/checkpoints/', run_id, '/v', toString(b + 1), '/weights.bin'),
  lower(hex(MD5(concat(run_id, toString(b))))), toInt64(b), toInt64(b), learner_ms + 500, 'bench.policy.versions', toInt32(0), toInt64(x)
FROM ${iterationsFrom(layout)}`;
}

/** The alert rows: every `alertEvery`-th iteration of each run, cycling through four detector kinds. */
function alertsFrom(layout: Layout): string {
  return `(
  SELECT *, ${list([...ALERT_KINDS])}[intDiv(b, ${layout.alertEvery}) % ${ALERT_KINDS.length} + 1] AS kind,
    concat(run_id, '/', kind, '/', toString(b)) AS alert_id
  FROM ${iterationsFrom(layout)}
  WHERE b % ${layout.alertEvery} = ${layout.alertEvery - 1}
)`;
}

export function alertsSql(layout: Layout): string {
  return `INSERT INTO collapse_alerts (alert_id, run_id, kind, severity, learner_step, policy_version, value, threshold, message, event_time_ms,
  kafka_topic, kafka_partition, kafka_offset)
SELECT alert_id, run_id, kind, if(kind = 'grad_norm_spike', 'critical', 'warning'), toInt64(b), toInt64(b + 1), 0.2 + ${noise('12', 0.1)}, 0.5,
  concat('Detector ', kind, ' fired at learner step ', toString(b), ': the recent value left its baseline.'), learner_ms + 1000,
  'bench.alerts', toInt32(0), toInt64(x)
FROM ${alertsFrom(layout)}`;
}

export function alertEvidenceSql(layout: Layout): string {
  return `INSERT INTO collapse_alert_evidence (run_id, alert_id, evidence_keys, evidence_values, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT run_id, alert_id, ['baseline', 'recent'], [0.45 + ${noise('13', 0.05)}, 0.2 + ${noise('14', 0.05)}], learner_ms + 1000, 'bench.alerts', toInt32(0), toInt64(x)
FROM ${alertsFrom(layout)}`;
}

/** DEAD_LETTERS dead letters over the 20 hours before `nowMs`, at offsets from `firstOffset` (so a rerun adds new ones). */
export function deadLettersSql(nowMs: number, firstOffset: number): string {
  const span = 20 * 3_600_000;
  return `INSERT INTO dead_letters (reason, detail, source_topic, source_partition, source_offset, key, payload, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT ${list([...DEAD_LETTER_REASONS])}[x % ${DEAD_LETTER_REASONS.length} + 1] AS reason,
  concat('step ', toString(x), ': ', reason, ' (field reward is not a number)'), 'trajflow.env.steps', toInt32(x % 8), toInt64(100000 + x * 17),
  concat('bench-run/g', toString(x), '/e0'), arrayStringConcat(arrayMap(y -> hex(intHash64(x * 100 + y)), range(toUInt32(10 + x % 30)))),
  toInt64(${nowMs - span} + intDiv(x * ${span}, ${DEAD_LETTERS})), 'bench.deadletter', toInt32(0), toInt64(${firstOffset} + x)
FROM (SELECT number AS x FROM numbers(${DEAD_LETTERS}))`;
}

export interface TableTiming {
  readonly table: string;
  readonly rows: number;
  readonly ms: number;
}

/** Generates every table of the layout into `client`'s database (migrated, empty). */
export async function generate(client: ClickHouseHttp, layout: Layout, progress: (line: string) => void): Promise<TableTiming[]> {
  const timings: TableTiming[] = [];
  async function timed(table: string, statements: readonly string[], label = table): Promise<void> {
    const start = performance.now();
    for (const [i, sql] of statements.entries()) {
      await client.exec(sql);
      if (statements.length > 1) progress(`${label}: ${i + 1}/${statements.length} inserts, ${((performance.now() - start) / 1000).toFixed(0)} s`);
    }
    const rows = Number((await client.query(`SELECT count() FROM ${table}`)).trim());
    const ms = performance.now() - start;
    timings.push({ table, rows, ms });
    progress(`${label}: ${rows.toLocaleString('en-US')} rows in ${(ms / 1000).toFixed(1)} s`);
  }
  const chunks = (total: number, size: number): Array<[number, number]> => Array.from({ length: Math.ceil(total / size) }, (_, i) => [i * size, Math.min(size, total - i * size)]);
  const episodeChunk = Math.round((STEP_CHUNK * GROUP_SIZE) / STEPS_PER_GROUP);
  await timed(
    'steps',
    chunks(layout.steps, STEP_CHUNK).map(([from, count]) => stepsSql(layout, from, count)),
  );
  await timed(
    'trajectories',
    chunks(layout.episodes, episodeChunk).map(([from, count]) => trajectoriesSql(layout, from, count)),
  );
  await timed(
    'trajectory_metrics',
    chunks(layout.episodes, episodeChunk).map(([from, count]) => trajectoryMetricsSql(layout, from, count)),
  );
  await timed(
    'samples',
    chunks(layout.episodes, episodeChunk).map(([from, count]) => samplesSql(layout, from, count)),
  );
  await timed('rollout_stats', [groupStatsSql(layout), batchStatsSql()], 'rollout_stats (group, then batch rows)');
  await timed('learner_steps', [learnerStepsSql(layout)]);
  await timed('learner_step_details', [learnerStepDetailsSql(layout)]);
  await timed('policy_versions', [policyVersionsSql(layout)]);
  await timed('collapse_alerts', [alertsSql(layout)]);
  await timed('collapse_alert_evidence', [alertEvidenceSql(layout)]);
  return timings;
}
