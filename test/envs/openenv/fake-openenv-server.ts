// A small but real OpenEnv-API server (HTTP + WebSocket on 127.0.0.1, a free port) for the adapter's
// tests, serving GuessNumberEnv the way openenv-core 0.2.x's HTTPEnvServer does: GET /health, /schema,
// /metadata; /ws with one environment per connection; reset/step/state answered in order, close
// answered by closing the socket; errors as {"type":"error","data":{"message","code",…}}.
// It records what it received, and can misbehave on request (stall, drop) to test the client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { acceptWebSocket, type TextSocket } from '../../../envs/openenv/index.js';
import { GUESS_MAX, GUESS_MIN, GuessNumberEnv, parseGuess } from './guess-number.js';

export interface FakeServerOptions {
  /** Guesses per episode; the last wrong one ends the episode with done. Default 4. */
  readonly maxSteps?: number;
  /** Mark that end as {"metadata":{"truncated":true}}. Default true. */
  readonly reportTruncation?: boolean;
  /** What /health reports. Default 'healthy'. */
  readonly healthStatus?: string;
  /** Never answer a step with this guess (to test request timeouts). */
  readonly stallOnGuess?: number;
  /** Drop the TCP connection on a step with this guess (to test lost connections). */
  readonly dropOnGuess?: number;
}

export interface FakeOpenEnvServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** Every message received, per connection, in order (parsed JSON, or the raw text when not JSON). */
  readonly received: unknown[][];
  /** Connections open now. */
  activeSessions(): number;
  stop(): Promise<void>;
}

const schema = {
  action: {
    title: 'GuessAction',
    type: 'object',
    properties: {
      metadata: { type: 'object', title: 'Metadata', description: 'Additional metadata for the action' },
      guess: { type: 'integer', minimum: GUESS_MIN, maximum: GUESS_MAX, title: 'Guess', description: `a whole number from ${GUESS_MIN} to ${GUESS_MAX}` },
    },
    required: ['guess'],
    additionalProperties: false,
  },
  observation: {
    title: 'GuessObservation',
    type: 'object',
    properties: {
      done: { type: 'boolean' },
      reward: { anyOf: [{ type: 'number' }, { type: 'null' }] },
      text: { type: 'string' },
      hint: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      guesses_left: { type: 'integer' },
    },
  },
  state: { title: 'State', type: 'object', properties: { episode_id: { anyOf: [{ type: 'string' }, { type: 'null' }] }, step_count: { type: 'integer', minimum: 0 } } },
};

const metadata = {
  name: 'GuessNumber',
  description: `Guess the secret number between ${GUESS_MIN} and ${GUESS_MAX}; each wrong guess tells you to go higher or lower.`,
  version: '1.0.0',
};

export async function startFakeOpenEnvServer(options: FakeServerOptions = {}): Promise<FakeOpenEnvServer> {
  const { maxSteps = 4, reportTruncation = true, healthStatus = 'healthy' } = options;
  const received: unknown[][] = [];
  const sockets = new Set<Duplex>();
  let active = 0;
  let episodes = 0;

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url === '/health') json(res, 200, { status: healthStatus });
    else if (req.method === 'GET' && req.url === '/schema') json(res, 200, schema);
    else if (req.method === 'GET' && req.url === '/metadata') json(res, 200, metadata);
    else json(res, 404, { detail: 'Not Found' });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (req.url !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const ws = acceptWebSocket(req, socket, head);
    if (ws === null) return;
    active += 1;
    const log: unknown[] = [];
    received.push(log);
    const env = new GuessNumberEnv(maxSteps, reportTruncation);
    ws.onClose(() => (active -= 1));
    ws.onText((text) => handle(ws, socket, env, log, text));
  });

  const send = (ws: TextSocket, message: unknown): void => ws.send(JSON.stringify(message));
  const error = (ws: TextSocket, code: string, message: string, extra: Record<string, unknown> = {}): void => send(ws, { type: 'error', data: { message, code, ...extra } });

  function handle(ws: TextSocket, socket: Duplex, env: GuessNumberEnv, log: unknown[], text: string): void {
    let message: { type?: unknown; data?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch (e) {
      log.push(text);
      error(ws, 'INVALID_JSON', `Invalid JSON: ${(e as Error).message}`);
      return;
    }
    log.push(message);
    const data = (typeof message.data === 'object' && message.data !== null ? message.data : {}) as Record<string, unknown>;
    try {
      switch (message.type) {
        case 'reset': {
          const seed = typeof data.seed === 'number' ? data.seed : undefined;
          const episodeId = typeof data.episode_id === 'string' ? data.episode_id : `episode-${++episodes}`;
          send(ws, { type: 'observation', data: env.reset(seed, episodeId) });
          return;
        }
        case 'step': {
          const parsed = parseGuess(data);
          if (!parsed.ok) {
            error(ws, 'VALIDATION_ERROR', 'Invalid message', { errors: parsed.errors });
            return;
          }
          if (parsed.guess === options.stallOnGuess) return;
          if (parsed.guess === options.dropOnGuess) {
            socket.destroy();
            return;
          }
          send(ws, { type: 'observation', data: env.step(parsed.guess) });
          return;
        }
        case 'state':
          send(ws, { type: 'state', data: { episode_id: env.episodeId, step_count: env.stepCount } });
          return;
        case 'close':
          ws.close(1000);
          return;
        default:
          error(ws, 'UNKNOWN_TYPE', `Unknown message type: ${String(message.type)}`);
      }
    } catch (e) {
      error(ws, 'EXECUTION_ERROR', (e as Error).message);
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    activeSessions: () => active,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}
