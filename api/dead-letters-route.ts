// GET /v1/dead-letters?limit=&sinceMs=&untilMs=&order=&reason=: the dead letters the sink stored in
// ClickHouse, newest first. Parameters are checked strictly (400 naming the parameter); ClickHouse
// unreachable or failing is a 503 whose body says which, while ClickHouse's own message goes to the log.
import express, { type RequestHandler, type Router } from 'express';
import { ClickHouseError } from '../infra/clickhouse/http.js';
import type { Logger } from './error-handler.js';
import { methodNotAllowed } from './error-handler.js';
import { HttpProblem, problemTypes } from '../core/problem.js';
import { parseDeadLetterQuery, queryDeadLetters, type AnalyticsStore } from '../storage/query/dead-letters.js';

export interface DeadLettersRouteDeps {
  readonly analytics: AnalyticsStore;
  /** Auth for reads (open on loopback, a token otherwise). */
  readonly readAuth: RequestHandler;
  readonly now: () => number;
  readonly log: Logger;
}

/** A ClickHouse failure as a 503; the server's message is logged, not returned. */
export function clickHouseProblem(error: unknown, log: Logger, what: string): HttpProblem {
  log(`${what}: ClickHouse failed`, error);
  const unreachable = error instanceof ClickHouseError && error.status === null;
  return new HttpProblem(
    problemTypes.clickhouseUnavailable,
    unreachable ? 'ClickHouse is not reachable; is it running (trajflow status)?' : 'ClickHouse could not answer the query (are the migrations applied? see the server log)',
    {},
    { 'Retry-After': '5' },
  );
}

export function deadLettersRouter(deps: DeadLettersRouteDeps): Router {
  const router = express.Router();
  router.get('/v1/dead-letters', deps.readAuth, async (req, res) => {
    const query = parseDeadLetterQuery(req.query as Record<string, unknown>, deps.now());
    let deadLetters: Awaited<ReturnType<typeof queryDeadLetters>>;
    try {
      deadLetters = await queryDeadLetters(deps.analytics, query);
    } catch (error) {
      if (error instanceof ClickHouseError) throw clickHouseProblem(error, deps.log, 'GET /v1/dead-letters');
      throw error;
    }
    res.set('Cache-Control', 'no-store').json({ query, count: deadLetters.length, deadLetters });
  });
  router.all('/v1/dead-letters', methodNotAllowed(['GET']));
  return router;
}
