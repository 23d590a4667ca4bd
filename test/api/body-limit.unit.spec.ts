// A body sent without a Content-Length (Transfer-Encoding: chunked) over the limit is a 413 as soon as the
// bytes received pass the limit, and the connection is closed — not once the client has sent it all (express'
// body reader reads a refused body to its end first, so an endless chunked body held the request until the
// timeout). The real HTTP server (startHttpServer) over fakes of Kafka and ClickHouse, spoken to over a socket.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { startHttpServer } from '../../api/server.js';
import { loadApiConfig } from '../../api/config.js';
import { makeStep } from '../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const LIMIT = 64 * 1024;
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

async function serve() {
  const published: StepEvent[][] = [];
  const letters: unknown[] = [];
  const server = await startHttpServer(loadApiConfig({ port: 0, maxBodyBytes: LIMIT }, {}), {
    codec,
    steps: { publishAll: async (steps) => void published.push([...steps]) },
    deadLetters: { route: async (letter) => void letters.push(letter) },
    probes: { kafka: async () => ({ ok: true, ms: 1 }), clickhouse: async () => ({ ok: true, ms: 1 }) },
    analytics: { queryJson: async () => [] },
    log: () => undefined,
  });
  closers.push(() => server.close(100));
  return { url: server.url, published, letters };
}

interface Exchange {
  /** What the server answered (head and body). */
  readonly response: string;
  /** Body bytes the client had written when the first byte of the answer came. */
  readonly sentWhenAnswered: number;
  readonly closed: boolean;
}

/**
 * Sends a chunked request: the head, then `chunk`-sized chunks every 5 ms up to `total` bytes, then (if `end`)
 * the last chunk. With `end` false the body never ends. Resolves when the server closed the connection or
 * `waitMs` passed.
 */
function chunked(url: string, path: string, body: { chunk: Buffer; total: number; end: boolean }, waitMs: number): Promise<Exchange> {
  const { hostname, port, host } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    let sent = 0;
    let sentWhenAnswered = -1;
    const done = (closed: boolean) => {
      clearInterval(writer);
      clearTimeout(timer);
      socket.destroy();
      resolve({ response, sentWhenAnswered, closed });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.setEncoding('utf8').on('data', (data: string) => {
      if (sentWhenAnswered < 0) sentWhenAnswered = sent;
      response += data;
    });
    // Writes to a closed connection fail (EPIPE, ECONNRESET): the server closing it is what is tested.
    socket.on('error', () => undefined);
    socket.on('close', () => done(true));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const writer = setInterval(() => {
      if (socket.destroyed) return;
      if (sent >= body.total) {
        if (body.end) socket.write('0\r\n\r\n');
        clearInterval(writer);
        return;
      }
      socket.write(`${body.chunk.length.toString(16)}\r\n`);
      socket.write(body.chunk);
      socket.write('\r\n');
      sent += body.chunk.length;
    }, 5);
  });
}

test('a chunked body that never ends is a 413 once it passes the limit, and the connection is closed', async () => {
  const { url, letters, published } = await serve();
  for (const path of ['/v1/steps', '/v1/replay']) {
    const started = Date.now();
    // 4 KiB chunks without end: the answer must come after the limit is passed, not after the body.
    const { response, sentWhenAnswered, closed } = await chunked(url, path, { chunk: Buffer.alloc(4096, 0x20), total: Number.POSITIVE_INFINITY, end: false }, 5000);
    assert.match(response, /^HTTP\/1\.1 413 /, `${path}: ${response.slice(0, 80) || 'no answer within 5 s'}`);
    assert.match(response, /application\/problem\+json/);
    assert.match(response, /without a Content-Length/);
    assert.match(response, new RegExp(`"limitBytes":${path === '/v1/steps' ? LIMIT : '\\d+'}`));
    assert.ok(closed, `${path}: the server closed the connection`);
    assert.ok(sentWhenAnswered > 0, `${path}: answered after some of the body`);
    assert.ok(Date.now() - started < 4000, `${path}: answered in ${Date.now() - started} ms`);
  }
  assert.deepEqual(letters, [], 'not dead-lettered: the body was not read whole');
  assert.deepEqual(published, []);
});

test('a chunked body that passes the limit by one byte is a 413 before it ends', async () => {
  const { url } = await serve();
  const { response, sentWhenAnswered, closed } = await chunked(url, '/v1/steps', { chunk: Buffer.alloc(LIMIT + 1, 0x20), total: LIMIT + 1, end: false }, 5000);
  assert.match(response, /^HTTP\/1\.1 413 /, response.slice(0, 80) || 'no answer within 5 s');
  assert.equal(sentWhenAnswered, LIMIT + 1);
  assert.ok(closed);
});

test('a chunked body within the limit is read as usual', async () => {
  const { url, published } = await serve();
  const step = Buffer.from(JSON.stringify(makeStep()));
  const { response } = await chunked(url, '/v1/steps', { chunk: step, total: step.length, end: true }, 5000);
  assert.match(response, /^HTTP\/1\.1 202 /, response.slice(0, 200));
  assert.equal(published.length, 1);
  // A body of exactly the limit is not refused for its size (here: spaces and a JSON object, not a step).
  const padded = Buffer.concat([Buffer.alloc(LIMIT - 2, 0x20), Buffer.from('{}')]);
  const atLimit = await chunked(url, '/v1/steps', { chunk: padded, total: padded.length, end: true }, 5000);
  assert.match(atLimit.response, /^HTTP\/1\.1 400 /, atLimit.response.slice(0, 200));
});
