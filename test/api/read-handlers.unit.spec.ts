// Unit: the read handlers without express or ClickHouse: the list envelope's keys and order, the path ids
// checked before any query runs, and the body built from what the queries answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpProblem } from '../../core/problem.js';
import { READ_ROUTES, listBody, type ReadRequest } from '../../api/read-handlers.js';

const NOW = 1_764_400_000_000;
const handler = (path: string) => READ_ROUTES.find(([p]) => p === path)![1];

/** A request whose queries all answer `answer`, counting how many ran. */
function request(params: Record<string, string>, answer: unknown, query: Record<string, unknown> = {}) {
  const asked: number[] = [];
  const req: ReadRequest = {
    params,
    query,
    now: () => NOW,
    ask: async <T>() => {
      asked.push(1);
      return answer as T;
    },
  };
  return { req, asked };
}

test('the list envelope: head, count, truncated, then the rows under their name', () => {
  const body = listBody({ runId: 'r', query: {} }, 'alerts', [1, 2], true);
  assert.deepEqual(Object.entries(body), [
    ['runId', 'r'],
    ['query', {}],
    ['count', 2],
    ['truncated', true],
    ['alerts', [1, 2]],
  ]);
});

test('GET /v1/runs answers the parsed query and the runs', async () => {
  const { req } = request({}, { runs: [{ runId: 'a' }], truncated: false }, { limit: '5' });
  const body = (await handler('/v1/runs')(req)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['query', 'count', 'truncated', 'runs']);
  assert.equal((body.query as { limit: number }).limit, 5);
  assert.equal(body.count, 1);
});

test('a bad run id is a 400 before any query runs', async () => {
  for (const [path, read] of READ_ROUTES.filter(([p]) => p.includes(':runId'))) {
    const { req, asked } = request({ runId: 'a b', episodeId: 'e-1' }, {});
    await assert.rejects(read(req), (error: unknown) => error instanceof HttpProblem && error.status === 400, path);
    assert.equal(asked.length, 0, path);
  }
});

test('the curve counts its points; pass@k spreads what the query answers', async () => {
  const curve = (await handler('/v1/runs/:runId/curve')(request({ runId: 'r' }, { points: [{}, {}], autoBucketed: false }).req)) as Record<string, unknown>;
  assert.deepEqual([curve.runId, curve.count, curve.autoBucketed], ['r', 2, false]);
  const pass = (await handler('/v1/runs/:runId/pass-at-k')(request({ runId: 'r' }, { latest: null }).req)) as Record<string, unknown>;
  assert.deepEqual(Object.keys(pass), ['runId', 'query', 'latest']);
});

test('an episode answers with its tokens as text (null without a sample)', async () => {
  const episode = { trajectory: {}, steps: [], sample: null };
  const body = (await handler('/v1/trajectories/:episodeId')(request({ episodeId: 'e-1' }, episode).req)) as Record<string, unknown>;
  assert.equal(body.tokenText, null);
});

test('every read path is mounted once', () => {
  const paths = READ_ROUTES.map(([p]) => p);
  assert.equal(new Set(paths).size, paths.length);
  assert.equal(paths.length, 11);
});
