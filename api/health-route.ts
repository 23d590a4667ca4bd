// GET /health: can the API do its job right now? Kafka is what ingest needs, so Kafka down is a 503
// ("fail"); ClickHouse is what reads need, so ClickHouse down is a 200 "degraded" (ingest still works).
// Each probe is bounded by its own timeout, so a hung service makes /health slow by seconds, not minutes.
import express, { type Router } from 'express';
import type { IngestStats } from './steps-route.js';

export interface ProbeResult {
  readonly ok: boolean;
  /** How long the probe took. */
  readonly ms: number;
  /** What failed, for an operator (no stack). */
  readonly detail?: string;
}

export interface HealthProbes {
  /** The broker answers a metadata request (the producer's connection is then usable). */
  kafka(): Promise<ProbeResult>;
  /** ClickHouse answers GET /ping. */
  clickhouse(): Promise<ProbeResult>;
}

export type HealthStatus = 'ok' | 'degraded' | 'fail';

export function healthStatus(kafka: ProbeResult, clickhouse: ProbeResult): HealthStatus {
  if (!kafka.ok) return 'fail';
  return clickhouse.ok ? 'ok' : 'degraded';
}

/** Runs a probe, timing it; a probe that throws counts as failed. */
export async function timed(probe: () => Promise<boolean>, describeFailure: (error: unknown) => string): Promise<ProbeResult> {
  const started = performance.now();
  try {
    const ok = await probe();
    return { ok, ms: Math.round(performance.now() - started), ...(ok ? {} : { detail: describeFailure(undefined) }) };
  } catch (error) {
    return { ok: false, ms: Math.round(performance.now() - started), detail: describeFailure(error) };
  }
}

export function healthRouter(probes: HealthProbes, stats: IngestStats): Router {
  const router = express.Router();
  router.get('/health', async (_req, res) => {
    const [kafka, clickhouse] = await Promise.all([probes.kafka(), probes.clickhouse()]);
    const status = healthStatus(kafka, clickhouse);
    res
      .status(status === 'fail' ? 503 : 200)
      .set('Cache-Control', 'no-store')
      .json({ status, checks: { kafka, clickhouse }, ingest: stats });
  });
  return router;
}
