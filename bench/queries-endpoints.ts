// The dashboard's read endpoints as `trajflow bench queries` times them: the paths the web UI asks for, requested in
// turn as a page load asks them, and each endpoint's median and max wall time against the target.
import { median } from './median.js';

export const TARGET_MS = 1000;

export interface EndpointResult {
  readonly name: string;
  readonly path: string;
  readonly statuses: number[];
  readonly timesMs: number[];
  readonly medianMs: number;
  readonly maxMs: number;
  /** Rows in the (last) response: runs, points, steps … */
  readonly rows: number;
  readonly bytes: number;
  readonly pass: boolean;
}

const count = (value: unknown): number => (Array.isArray(value) ? value.length : typeof value === 'number' ? value : 0);

export interface Endpoint {
  readonly name: string;
  readonly path: string;
  /** Rows the response holds. */
  readonly rows: (body: Record<string, unknown>) => number;
}

/** The read endpoints, with the query strings the web UI sends (web/static/*.js). */
export function endpoints(runId: string, episodeId: string): Endpoint[] {
  const run = `/v1/runs/${encodeURIComponent(runId)}`;
  const byCount = (body: Record<string, unknown>): number => count(body.count);
  return [
    { name: 'runs', path: '/v1/runs?limit=200', rows: byCount },
    { name: 'curve', path: `${run}/curve?limit=1000`, rows: byCount },
    { name: 'rollout-stats', path: `${run}/rollout-stats?limit=1000`, rows: byCount },
    { name: 'learner-metrics', path: `${run}/learner-metrics?order=desc&limit=1000`, rows: byCount },
    { name: 'alerts', path: `${run}/alerts?order=desc&limit=500`, rows: byCount },
    { name: 'pass-at-k', path: `${run}/pass-at-k?limit=1000`, rows: (body) => count((body.overTime as { points?: unknown } | undefined)?.points) },
    { name: 'trajectories', path: `${run}/trajectories?limit=50`, rows: byCount },
    { name: 'trajectory', path: `${run}/trajectories/${encodeURIComponent(episodeId)}`, rows: (body) => count(body.steps) },
    { name: 'trajectory, run looked up', path: `/v1/trajectories/${encodeURIComponent(episodeId)}`, rows: (body) => count(body.steps) },
    { name: 'dead-letters', path: '/v1/dead-letters?limit=200', rows: byCount },
  ];
}

/** What the requests to one endpoint measured: every wall time and status, and the last response's rows and bytes. */
export interface EndpointTiming {
  readonly times: number[];
  readonly statuses: number[];
  readonly rows: number;
  readonly bytes: number;
}

/** An endpoint's figures: the median and max over its requests, PASS when the median is under TARGET_MS and every answer was 200. */
export function endpointResult(endpoint: Pick<Endpoint, 'name' | 'path'>, timing: EndpointTiming): EndpointResult {
  const medianMs = median(timing.times);
  return {
    name: endpoint.name,
    path: endpoint.path,
    statuses: timing.statuses,
    timesMs: timing.times.map((t) => Math.round(t * 10) / 10),
    medianMs,
    maxMs: Math.max(...timing.times),
    rows: timing.rows,
    bytes: timing.bytes,
    pass: medianMs < TARGET_MS && timing.statuses.every((s) => s === 200),
  };
}

/** One request to `endpoint` on the API at `url`, added to its timing. */
async function request(url: string, endpoint: Endpoint, timing: EndpointTiming): Promise<EndpointTiming> {
  const start = performance.now();
  const response = await fetch(`${url}${endpoint.path}`);
  const text = await response.text();
  const body = JSON.parse(text) as Record<string, unknown>;
  return {
    times: [...timing.times, performance.now() - start],
    statuses: [...timing.statuses, response.status],
    rows: response.ok ? endpoint.rows(body) : 0,
    bytes: Buffer.byteLength(text),
  };
}

/** Each endpoint `repeat` times, in turn, as a page load asks them, rather than one endpoint many times in a row. */
export async function timeEndpoints(url: string, list: readonly Endpoint[], repeat: number): Promise<EndpointResult[]> {
  const timings: EndpointTiming[] = list.map(() => ({ times: [], statuses: [], rows: 0, bytes: 0 }));
  for (let round = 0; round < repeat; round++) {
    for (const [i, endpoint] of list.entries()) timings[i] = await request(url, endpoint, timings[i]!);
  }
  return list.map((endpoint, i) => endpointResult(endpoint, timings[i]!));
}
