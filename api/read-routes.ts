// The read endpoints over ClickHouse: runs, and per run its learning curve, rollout statistics, learner
// metrics, collapse alerts, pass@k, held-out evaluations, and trajectories (listed, and one turn by turn,
// with the sample's tokens as text when trajflow's tokenizer made them: token-text.ts). Each handler is the
// same three steps: check the path ids and the query (400 naming the parameter), run the module's queries,
// answer JSON (read-handlers.ts). The SQL is built in query/ from checked values only; a ClickHouse failure is a 503.
import express, { type Request, type RequestHandler, type Router } from 'express';
import { ClickHouseError } from '../infra/clickhouse/http.js';
import { clickHouseProblem } from './dead-letters-route.js';
import { methodNotAllowed, type Logger } from './error-handler.js';
import type { RawQuery } from '../storage/query/params.js';
import type { AnalyticsStore } from '../storage/query/store.js';
import { READ_ROUTES, type ReadHandler, type ReadRequest } from './read-handlers.js';

export interface ReadRoutesDeps {
  readonly analytics: AnalyticsStore;
  /** Auth for reads (open on loopback, a token otherwise). */
  readonly readAuth: RequestHandler;
  readonly now: () => number;
  readonly log: Logger;
}

/** An express request as a handler sees it; a ClickHouse failure of its queries becomes the 503 problem (message to the log). */
function readRequest(deps: ReadRoutesDeps, req: Request): ReadRequest {
  return {
    params: req.params,
    query: req.query as RawQuery,
    now: deps.now,
    async ask(work) {
      try {
        return await work(deps.analytics);
      } catch (error) {
        if (error instanceof ClickHouseError) throw clickHouseProblem(error, deps.log, `${req.method} ${req.path}`);
        throw error;
      }
    },
  };
}

/** GET on `path` behind read auth, answering the handler's body as uncached JSON; other methods are a 405. */
function mount(router: Router, deps: ReadRoutesDeps, path: string, handler: ReadHandler): void {
  router.get(path, deps.readAuth, async (req, res) => {
    const body = await handler(readRequest(deps, req));
    res.set('Cache-Control', 'no-store').json(body);
  });
  router.all(path, methodNotAllowed(['GET']));
}

export function readRouter(deps: ReadRoutesDeps): Router {
  const router = express.Router();
  for (const [path, handler] of READ_ROUTES) mount(router, deps, path, handler);
  return router;
}
