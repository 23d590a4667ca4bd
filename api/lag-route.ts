// GET /v1/lag?group=: consumer lag of the project's consumer groups (see query/lag.ts). Kafka not answering
// is a 503 (its message goes to the log); a server started without a lag source (tests, fakes) says so.
import express, { type RequestHandler, type Router } from 'express';
import { methodNotAllowed, type Logger } from './error-handler.js';
import { HttpProblem, problemTypes } from '../core/problem.js';
import { parseLagQuery, type LagQuery, type LagReport } from '../storage/query/lag.js';
import type { RawQuery } from '../storage/query/params.js';

/** Reads the lag from the broker (services.ts has one over a kafkajs admin client). */
export interface LagSource {
  report(query: LagQuery): Promise<LagReport>;
}

export interface LagRouteDeps {
  readonly lag?: LagSource;
  readonly readAuth: RequestHandler;
  readonly log: Logger;
}

export function lagRouter(deps: LagRouteDeps): Router {
  const router = express.Router();
  router.get('/v1/lag', deps.readAuth, async (req, res) => {
    const query = parseLagQuery(req.query as RawQuery);
    if (deps.lag === undefined) {
      throw new HttpProblem(problemTypes.kafkaUnavailable, 'this server has no Kafka admin client for consumer lag');
    }
    let report: LagReport;
    try {
      report = await deps.lag.report(query);
    } catch (error) {
      if (error instanceof HttpProblem) throw error;
      deps.log('GET /v1/lag: Kafka failed', error);
      throw new HttpProblem(problemTypes.kafkaUnavailable, 'Kafka did not answer the offset requests; is it running (trajflow status)?', {}, { 'Retry-After': '5' });
    }
    const totalLag = report.groups.reduce<number | null>((sum, group) => (sum === null || group.lag === null ? null : sum + group.lag), 0);
    res.set('Cache-Control', 'no-store').json({ query, ...report, totalLag });
  });
  router.all('/v1/lag', methodNotAllowed(['GET']));
  return router;
}
