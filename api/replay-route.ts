// POST /v1/replay starts an off-policy replay (learner/replay: selected trajectories → samples marked
// 'replay:' for the run's learner) and answers 202 with its id at once; GET /v1/replays/:replayId gives
// its state and, when done, the report. Body: { "selection": {...}, "processing"?: {...} } with the
// fields of `trajflow replay` (replay-body.ts reads it: an unknown field is a 400 naming it; the values are
// checked by learner/replay/select.ts and run-replay.ts). A write: it needs a token whenever tokens are
// configured.
import express, { type RequestHandler, type Router } from 'express';
import { randomUUID } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import { buildReplayProcessing, type ReplayProcessingInput, type ReplayReport } from '../learner/replay/run-replay.js';
import { buildSelection, type ReplaySelectionInput } from '../learner/replay/select.js';
import { bearerAuth } from './auth.js';
import { rawBody } from './body-limit.js';
import { parseReplayBody } from './replay-body.js';
import type { ApiConfig } from './config.js';
import { methodNotAllowed, type Logger } from './error-handler.js';
import { HttpProblem, problemTypes } from '../core/problem.js';
import { JSON_TYPE } from './step-body.js';
import { parseStrictJson } from './strict-json.js';

/** Runs a replay (services.ts binds it to the backbone). */
export type ReplayStarter = (selection: ReplaySelectionInput, processing: ReplayProcessingInput, replayId: string) => Promise<ReplayReport>;

interface ReplayState {
  readonly replayId: string;
  status: 'running' | 'done' | 'failed';
  readonly startedAtMs: number;
  report?: ReplayReport;
  error?: string;
}

const MAX_KEPT = 100;

/** Largest body of POST /v1/replay: a selection and processing settings are a few hundred bytes. */
export const REPLAY_BODY_LIMIT = 64 * 1024;

const jsonContentType: RequestHandler = (req, _res, next) => {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== JSON_TYPE) {
    throw new HttpProblem(
      problemTypes.unsupportedMediaType,
      `${type ? `Content-Type '${type}' is not accepted` : 'the request has no Content-Type'}: send ${JSON_TYPE}`,
      {},
      { 'Accept-Post': JSON_TYPE },
    );
  }
  next();
};

export function replayRouter(deps: { config: ApiConfig; replay?: ReplayStarter; log: Logger }): Router {
  const router = express.Router();
  const states = new Map<string, ReplayState>();
  const writeAuth = bearerAuth(deps.config.tokens, deps.config.tokens.length > 0);
  // The body is read as bytes and parsed here (strict-json.ts: UTF-8 only, no key twice), so that a body
  // that is not JSON is a 400 like any other bad body, never the body parser's error.
  router.post('/v1/replay', writeAuth, jsonContentType, rawBody(REPLAY_BODY_LIMIT), (req, res) => {
    if (!deps.replay) throw new HttpProblem(problemTypes.kafkaUnavailable, 'this server has no Kafka producer for replays');
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (raw.length === 0) throw new HttpProblem(problemTypes.invalidBody, 'the body is empty: send {"selection": {"runId": "…", …}, "processing"?: {…}}');
    const json = parseStrictJson(raw);
    if (!json.ok) throw new HttpProblem(problemTypes.invalidBody, json.detail, json.field === undefined ? {} : { field: json.field });
    // Every field known (replay-body.ts), then every value checked, before anything starts: a bad field is a 400.
    const body = parseReplayBody(json.value);
    const replayId = `http-${randomUUID().slice(0, 12)}`;
    const processing: ReplayProcessingInput = { ...body.processing, replayId };
    try {
      buildSelection(body.selection);
      buildReplayProcessing(processing);
    } catch (error) {
      if (error instanceof ConfigError) throw new HttpProblem(problemTypes.invalidBody, error.message);
      throw error;
    }
    const state: ReplayState = { replayId, status: 'running', startedAtMs: Date.now() };
    states.set(replayId, state);
    while (states.size > MAX_KEPT) states.delete(states.keys().next().value!);
    void deps.replay(body.selection, processing, replayId).then(
      (report) => {
        state.status = 'done';
        state.report = report;
      },
      (error: unknown) => {
        state.status = 'failed';
        state.error = error instanceof ConfigError ? error.message : 'the replay failed (see the server log)';
        if (!(error instanceof ConfigError)) deps.log(`POST /v1/replay ${replayId} failed`, error);
      },
    );
    res.status(202).location(`/v1/replays/${replayId}`).json({ replayId, status: state.status });
  });
  router.all('/v1/replay', methodNotAllowed(['POST']));
  router.get('/v1/replays/:replayId', writeAuth, (req, res) => {
    const state = states.get(String(req.params.replayId ?? ''));
    if (!state) throw new HttpProblem(problemTypes.notFound, `no replay ${req.params.replayId} on this server`);
    res.set('Cache-Control', 'no-store').json(state);
  });
  return router;
}
