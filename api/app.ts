// The express app of the HTTP API, from its dependencies: nothing here opens a connection, so tests can
// hand in fakes (a failing publisher, a throwing route) and the real server hands in the backbone.
// Routes: ingest (POST /v1/steps), /health, and the reads — dead letters, runs and their series,
// trajectories, consumer lag, the event stream — and the web dashboard over them (GET /, web/).
// Order matters: routes, then `mount` (more routers: tests), then the 404, then the one error handler that
// turns every failure into problem details.
import express, { type Express } from 'express';
import type { EventCodec } from '../schemas/index.js';
import type { DeadLetterSink, StepPublisher } from '../streams/index.js';
import { webRouter } from '../web/router.js';
import { bearerAuth } from './auth.js';
import { isLoopback, type ApiConfig } from './config.js';
import { deadLettersRouter } from './dead-letters-route.js';
import { consoleLogger, notFound, problemErrorHandler, type Logger } from './error-handler.js';
import { eventsRouter, type EventStreamOptions } from './events-route.js';
import { healthRouter, type HealthProbes } from './health-route.js';
import { hostCheck } from './host-check.js';
import { lagRouter, type LagSource } from './lag-route.js';
import { openApiRouter } from './openapi.js';
import type { AnalyticsStore } from '../storage/query/store.js';
import { readRouter } from './read-routes.js';
import { stepsRouter, type IngestStats } from './steps-route.js';
import { replayRouter, type ReplayStarter } from './replay-route.js';
import { RateLimiter, type Clock } from './token-bucket.js';

export interface ApiDeps {
  readonly config: ApiConfig;
  readonly codec: EventCodec;
  readonly steps: Pick<StepPublisher, 'publishAll'>;
  readonly deadLetters: DeadLetterSink;
  readonly probes: HealthProbes;
  readonly analytics: AnalyticsStore;
  /** Consumer lag for GET /v1/lag; without it that endpoint answers 503. */
  readonly lag?: LagSource;
  /** Polling and limits of GET /v1/events. */
  readonly events?: EventStreamOptions;
  /** Wall clock for query defaults (default Date.now). */
  readonly now?: () => number;
  /** Monotonic clock for the rate limiter (default performance.now). */
  readonly monotonic?: Clock;
  readonly log?: Logger;
  /** Starts replays for POST /v1/replay; without it that endpoint answers 503. */
  readonly replay?: ReplayStarter;
  /** Adds routers before the 404 and error handlers (tests). */
  readonly mount?: (app: Express) => void;
}

export interface ApiApp extends Express {
  /** Counters shown by /health. */
  readonly ingestStats: IngestStats;
  /** Event streams (GET /v1/events) open now. */
  openStreams(): number;
  /** Ends every event stream: they never go idle, so a closing server ends them first. */
  closeStreams(): void;
}

export function createApp(deps: ApiDeps): ApiApp {
  const { config, log = consoleLogger, now = Date.now } = deps;
  const app = express() as ApiApp;
  app.disable('x-powered-by');
  app.set('etag', false);
  const stats: IngestStats = { acceptedSteps: 0, rejectedRequests: 0, deadLettered: 0, publishFailures: 0, lastPublishError: null };
  Object.defineProperty(app, 'ingestStats', { value: stats });
  const limiter = new RateLimiter({ ratePerSecond: config.rateLimit.stepsPerSecond, burst: config.rateLimit.burst, ...(deps.monotonic ? { now: deps.monotonic } : {}) });
  // Reads stay open on loopback; bound to anything else they need a token like writes.
  const readAuth = bearerAuth(config.tokens, config.tokens.length > 0 && !isLoopback(config.host));

  // Every answer says its Content-Type is the truth: a browser must not sniff a JSON or problem body (which
  // may quote what a client sent) into HTML or script. The dashboard's files set it too (web/router.ts).
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  // Before every route, the dashboard's files included: Host and Origin (host-check.ts: DNS rebinding).
  app.use(hostCheck(config.allowedHosts, config.host));
  app.use(healthRouter(deps.probes, stats));
  app.use(stepsRouter({ config, codec: deps.codec, steps: deps.steps, deadLetters: deps.deadLetters, limiter, stats, log }));
  app.use(deadLettersRouter({ analytics: deps.analytics, readAuth, now, log }));
  app.use(readRouter({ analytics: deps.analytics, readAuth, now, log }));
  app.use(replayRouter({ config, ...(deps.replay ? { replay: deps.replay } : {}), log }));
  app.use(lagRouter({ ...(deps.lag ? { lag: deps.lag } : {}), readAuth, log }));
  const events = eventsRouter({
    analytics: deps.analytics,
    readAuth,
    now,
    log,
    options: { maxStreams: config.maxEventStreams, maxStreamsPerClient: config.maxEventStreamsPerClient, ...deps.events },
  });
  app.use(events.router);
  Object.defineProperty(app, 'openStreams', { value: () => events.open() });
  Object.defineProperty(app, 'closeStreams', { value: () => events.closeAll() });
  app.use(openApiRouter());
  app.use(webRouter());
  deps.mount?.(app);
  app.use(notFound);
  app.use(problemErrorHandler(log));
  return app;
}
