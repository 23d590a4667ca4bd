// The read endpoints over ClickHouse: runs, and per run its learning curve, rollout statistics, learner
// metrics, collapse alerts, pass@k, held-out evaluations, and trajectories (listed, and one turn by turn,
// with the sample's tokens as text when trajflow's tokenizer made them: token-text.ts). Each handler is the
// same three steps: check the path ids and the query (400 naming the parameter), run the module's queries,
// answer JSON. The SQL is built in query/ from checked values only; a ClickHouse failure is a 503.
import express, { type Request, type RequestHandler, type Router } from 'express';
import { ClickHouseError } from '../infra/clickhouse/http.js';
import { clickHouseProblem } from './dead-letters-route.js';
import { methodNotAllowed, type Logger } from './error-handler.js';
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

export interface ReadRoutesDeps {
  readonly analytics: AnalyticsStore;
  /** Auth for reads (open on loopback, a token otherwise). */
  readonly readAuth: RequestHandler;
  readonly now: () => number;
  readonly log: Logger;
}

const rawQuery = (req: Request): RawQuery => req.query as RawQuery;

export function readRouter(deps: ReadRoutesDeps): Router {
  const router = express.Router();
  const { analytics: store, now } = deps;

  /** Runs the queries of one request; a ClickHouse failure becomes the 503 problem (message to the log). */
  async function fromClickHouse<T>(req: Request, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ClickHouseError) throw clickHouseProblem(error, deps.log, `${req.method} ${req.path}`);
      throw error;
    }
  }

  function get(path: string, handler: (req: Request) => Promise<object>): void {
    router.get(path, deps.readAuth, async (req, res) => {
      const body = await handler(req);
      res.set('Cache-Control', 'no-store').json(body);
    });
    router.all(path, methodNotAllowed(['GET']));
  }

  get('/v1/runs', async (req) => {
    const query = parseRunsQuery(rawQuery(req), now());
    const { runs, truncated } = await fromClickHouse(req, () => queryRuns(store, query));
    return { query, count: runs.length, truncated, runs };
  });

  get('/v1/runs/:runId/curve', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseSeriesQuery(runId, rawQuery(req), now());
    const curve = await fromClickHouse(req, () => queryCurve(store, query));
    return { runId, query, ...curve, count: curve.points.length };
  });

  get('/v1/runs/:runId/rollout-stats', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseRolloutStatsQuery(runId, rawQuery(req), now());
    const { rolloutStats, truncated } = await fromClickHouse(req, () => queryRolloutStats(store, query));
    return { runId, query, count: rolloutStats.length, truncated, rolloutStats };
  });

  get('/v1/runs/:runId/learner-metrics', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseLearnerMetricsQuery(runId, rawQuery(req), now());
    const { learnerSteps, truncated } = await fromClickHouse(req, () => queryLearnerMetrics(store, query));
    return { runId, query, count: learnerSteps.length, truncated, learnerSteps };
  });

  get('/v1/runs/:runId/alerts', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseAlertsQuery(runId, rawQuery(req), now());
    const { alerts, truncated } = await fromClickHouse(req, () => queryAlerts(store, query));
    return { runId, query, count: alerts.length, truncated, alerts };
  });

  get('/v1/runs/:runId/pass-at-k', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parsePassAtKQuery(runId, rawQuery(req), now());
    const result = await fromClickHouse(req, () => queryPassAtK(store, query));
    return { runId, query, ...result };
  });

  get('/v1/runs/:runId/evaluations', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseEvaluationsQuery(runId, rawQuery(req), now());
    const { evaluations, truncated } = await fromClickHouse(req, () => queryEvaluations(store, query));
    return { runId, query, count: evaluations.length, truncated, evaluations };
  });

  get('/v1/runs/:runId/episode-outcomes', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseEpisodeOutcomesQuery(runId, rawQuery(req), now());
    return { runId, query, ...(await fromClickHouse(req, () => queryEpisodeOutcomes(store, query))) };
  });

  get('/v1/runs/:runId/trajectories', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const query = parseTrajectoriesQuery(runId, rawQuery(req), now());
    const { trajectories, truncated } = await fromClickHouse(req, () => queryTrajectories(store, query));
    return { runId, query, count: trajectories.length, truncated, trajectories };
  });

  get('/v1/runs/:runId/trajectories/:episodeId', async (req) => {
    const runId = routeId('runId', req.params.runId);
    const episodeId = routeId('episodeId', req.params.episodeId);
    const query = parseEpisodeQuery(episodeId, rawQuery(req), runId);
    return withTokenText(await fromClickHouse(req, () => queryEpisode(store, query)));
  });

  get('/v1/trajectories/:episodeId', async (req) => {
    const episodeId = routeId('episodeId', req.params.episodeId);
    const query = parseEpisodeQuery(episodeId, rawQuery(req));
    return withTokenText(await fromClickHouse(req, () => queryEpisode(store, query)));
  });

  return router;
}
