// One handler per read endpoint, each the same three steps: check the path ids and the query (a 400 naming
// the parameter), run the module's queries through `ask`, shape the JSON body. They see the request only as
// a ReadRequest, so a test can call them with canned query results; read-routes.ts mounts them on express.
import { parseAlertsQuery, queryAlerts } from '../storage/query/alerts.js';
import { parseSeriesQuery, queryCurve } from '../storage/query/curve.js';
import { parseEpisodeOutcomesQuery, queryEpisodeOutcomes } from '../storage/query/episode-outcomes.js';
import { parseEvaluationsQuery, queryEvaluations } from '../storage/query/evaluations.js';
import { parseLearnerMetricsQuery, queryLearnerMetrics } from '../storage/query/learner-metrics.js';
import { routeId, type RawQuery } from '../storage/query/params.js';
import { parsePassAtKQuery, queryPassAtK } from '../storage/query/pass-at-k.js';
import { parseRolloutStatsQuery, queryRolloutStats } from '../storage/query/rollout-stats.js';
import { parseRunsQuery, queryRuns } from '../storage/query/runs.js';
import type { AnalyticsStore } from '../storage/query/store.js';
import { parseEpisodeQuery, parseTrajectoriesQuery, queryEpisode, queryTrajectories } from '../storage/query/trajectories.js';
import { withTokenText } from './token-text.js';

/** What a read handler needs of its request. */
export interface ReadRequest {
  /** The path's parameters as express decoded them; each is checked by routeId. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly query: RawQuery;
  readonly now: () => number;
  /** Runs the request's queries; a ClickHouse failure becomes the 503 problem. */
  ask<T>(work: (store: AnalyticsStore) => Promise<T>): Promise<T>;
}

export type ReadHandler = (req: ReadRequest) => Promise<object>;

/** The envelope of the list endpoints, keys in this order: `{ ...head, count, truncated, [name]: rows }`. */
export function listBody<H extends object>(head: H, name: string, rows: readonly unknown[], truncated: boolean): H & { count: number; truncated: boolean } {
  return { ...head, count: rows.length, truncated, [name]: rows };
}

const runIdOf = (req: ReadRequest): string => routeId('runId', req.params.runId);

const runs: ReadHandler = async (req) => {
  const query = parseRunsQuery(req.query, req.now());
  const { runs, truncated } = await req.ask((store) => queryRuns(store, query));
  return listBody({ query }, 'runs', runs, truncated);
};

const curve: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseSeriesQuery(runId, req.query, req.now());
  const result = await req.ask((store) => queryCurve(store, query));
  return { runId, query, ...result, count: result.points.length };
};

const rolloutStats: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseRolloutStatsQuery(runId, req.query, req.now());
  const { rolloutStats, truncated } = await req.ask((store) => queryRolloutStats(store, query));
  return listBody({ runId, query }, 'rolloutStats', rolloutStats, truncated);
};

const learnerMetrics: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseLearnerMetricsQuery(runId, req.query, req.now());
  const { learnerSteps, truncated } = await req.ask((store) => queryLearnerMetrics(store, query));
  return listBody({ runId, query }, 'learnerSteps', learnerSteps, truncated);
};

const alerts: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseAlertsQuery(runId, req.query, req.now());
  const { alerts, truncated } = await req.ask((store) => queryAlerts(store, query));
  return listBody({ runId, query }, 'alerts', alerts, truncated);
};

const passAtK: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parsePassAtKQuery(runId, req.query, req.now());
  return { runId, query, ...(await req.ask((store) => queryPassAtK(store, query))) };
};

const evaluations: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseEvaluationsQuery(runId, req.query, req.now());
  const { evaluations, truncated } = await req.ask((store) => queryEvaluations(store, query));
  return listBody({ runId, query }, 'evaluations', evaluations, truncated);
};

const episodeOutcomes: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseEpisodeOutcomesQuery(runId, req.query, req.now());
  return { runId, query, ...(await req.ask((store) => queryEpisodeOutcomes(store, query))) };
};

const trajectories: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const query = parseTrajectoriesQuery(runId, req.query, req.now());
  const { trajectories, truncated } = await req.ask((store) => queryTrajectories(store, query));
  return listBody({ runId, query }, 'trajectories', trajectories, truncated);
};

const runEpisode: ReadHandler = async (req) => {
  const runId = runIdOf(req);
  const episodeId = routeId('episodeId', req.params.episodeId);
  const query = parseEpisodeQuery(episodeId, req.query, runId);
  return withTokenText(await req.ask((store) => queryEpisode(store, query)));
};

const episode: ReadHandler = async (req) => {
  const episodeId = routeId('episodeId', req.params.episodeId);
  const query = parseEpisodeQuery(episodeId, req.query);
  return withTokenText(await req.ask((store) => queryEpisode(store, query)));
};

/** Every read endpoint with its handler, in the order they are mounted. */
export const READ_ROUTES: ReadonlyArray<readonly [path: string, handler: ReadHandler]> = [
  ['/v1/runs', runs],
  ['/v1/runs/:runId/curve', curve],
  ['/v1/runs/:runId/rollout-stats', rolloutStats],
  ['/v1/runs/:runId/learner-metrics', learnerMetrics],
  ['/v1/runs/:runId/alerts', alerts],
  ['/v1/runs/:runId/pass-at-k', passAtK],
  ['/v1/runs/:runId/evaluations', evaluations],
  ['/v1/runs/:runId/episode-outcomes', episodeOutcomes],
  ['/v1/runs/:runId/trajectories', trajectories],
  ['/v1/runs/:runId/trajectories/:episodeId', runEpisode],
  ['/v1/trajectories/:episodeId', episode],
];
