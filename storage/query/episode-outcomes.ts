// GET /v1/runs/:runId/episode-outcomes: how a run's episodes ended — assembled trajectories by outcome
// (terminated, truncated, incomplete), and for episodes recorded by the OpenAI-compatible gateway how each was
// ended: finished by the agent (POST /v1/episodes/{id}/finish) or timed out, which the gateway publishes as a
// truncated outcome step with info.gatewayOutcome = timeout (docs/design/gateway-recording.md).
//
// Both counts are distinct episodes, so an event the sink stored twice counts once without FINAL. The gateway's
// ends are read from the run's steps (sorted by run first), only those of the gateway's env version that carry
// the info key; the trajectories table does not keep a step's info.
import { RUN_WINDOW, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { sqlInt, sqlString } from './sql.js';
import { int, read, type AnalyticsStore } from './store.js';

/** The env version every step the gateway publishes carries (gateway/record.ts). */
export const GATEWAY_ENV_VERSION = 'openai-gateway-v1';

export interface EpisodeOutcomesQuery extends TimeWindow {
  readonly runId: string;
}

export const episodeOutcomesParams = ['sinceMs', 'untilMs'] as const;

export function parseEpisodeOutcomesQuery(runId: string, query: RawQuery, nowMs: number): EpisodeOutcomesQuery {
  const values = readQuery(query, episodeOutcomesParams);
  return { runId, ...windowParams(values, nowMs, RUN_WINDOW) };
}

/** One row per (source, name): source 'trajectory' names an outcome, source 'gateway' an info.gatewayOutcome. */
export function episodeOutcomesSql(q: EpisodeOutcomesQuery): string {
  const run = sqlString(q.runId);
  const window = (column: string) => `${column} >= ${sqlInt(q.sinceMs)} AND ${column} < ${sqlInt(q.untilMs)}`;
  return `SELECT 'trajectory' AS source, toString(outcome) AS name, toUInt64(uniqExact(episode_id)) AS episodes
FROM trajectories
WHERE run_id = ${run} AND ${window('last_event_time_ms')}
GROUP BY outcome
UNION ALL
SELECT 'gateway', info_values[indexOf(info_keys, 'gatewayOutcome')], toUInt64(uniqExact(episode_id))
FROM steps
WHERE run_id = ${run} AND env_version = ${sqlString(GATEWAY_ENV_VERSION)} AND indexOf(info_keys, 'gatewayOutcome') > 0 AND ${window('event_time_ms')}
GROUP BY info_values[indexOf(info_keys, 'gatewayOutcome')]`;
}

export interface EpisodeOutcomeRow {
  source: string;
  name: string;
  episodes: number | string;
}

export interface EpisodeOutcomes {
  /** Assembled trajectories by how they ended. */
  readonly trajectories: { readonly terminated: number; readonly truncated: number; readonly incomplete: number };
  /** Episodes recorded by the gateway, by how they were ended (all 0 for a run without gateway episodes). */
  readonly gateway: { readonly finished: number; readonly timedOut: number };
}

export function episodeOutcomesView(rows: readonly EpisodeOutcomeRow[]): EpisodeOutcomes {
  const count = (source: string, name: string) => rows.filter((r) => r.source === source && r.name === name).reduce((n, r) => n + int(r.episodes), 0);
  return {
    trajectories: { terminated: count('trajectory', 'terminated'), truncated: count('trajectory', 'truncated'), incomplete: count('trajectory', 'incomplete') },
    gateway: { finished: count('gateway', 'finish'), timedOut: count('gateway', 'timeout') },
  };
}

export async function queryEpisodeOutcomes(store: AnalyticsStore, q: EpisodeOutcomesQuery): Promise<EpisodeOutcomes> {
  return episodeOutcomesView(await read<EpisodeOutcomeRow>(store, episodeOutcomesSql(q)));
}
