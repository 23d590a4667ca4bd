// Integration: the OpenEnv adapter against a real HTTP + WebSocket server speaking openenv-core 0.2.x's
// protocol (fake-openenv-server.ts): whole episodes, invalid actions (ours and the server's
// VALIDATION_ERROR), server errors, timeouts, dropped connections, close, connect-time checks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EpisodeOverError, ResetNeededError } from '../../../envs/errors.js';
import {
  OpenEnvClosedError,
  OpenEnvConcurrentCallError,
  OpenEnvConnectionError,
  OpenEnvEnvironment,
  OpenEnvHttpError,
  OpenEnvSchemaError,
  OpenEnvServerError,
  OpenEnvTimeoutError,
  OpenEnvUnhealthyError,
  canonicalJson,
  type OpenEnvOptions,
} from '../../../envs/openenv/index.js';
import { waitFor } from '../../helpers/kafka.js';
import { CRASHING_SEED, secretFor } from './guess-number.js';
import { startFakeOpenEnvServer, type FakeOpenEnvServer, type FakeServerOptions } from './fake-openenv-server.js';

const reply = (answer: string | number): string => `<think>binary search</think><answer>${answer}</answer>`;

/** Starts a server, connects one adapter, and stops both after `body`. */
async function withEnv(
  serverOptions: FakeServerOptions,
  envOptions: Omit<OpenEnvOptions, 'url'>,
  body: (env: OpenEnvEnvironment, server: FakeOpenEnvServer) => Promise<void>,
): Promise<void> {
  const server = await startFakeOpenEnvServer(serverOptions);
  const env = await OpenEnvEnvironment.connect({ url: server.url, actionField: 'guess', ...envOptions });
  try {
    await body(env, server);
  } finally {
    await env.close();
    await server.stop();
  }
}

/** Messages of one type the server received on connection `index`. */
function sent(server: FakeOpenEnvServer, index: number, type: string): unknown[] {
  return (server.received[index] ?? []).filter((m) => (m as { type?: string }).type === type);
}

describe('OpenEnv adapter: episodes', () => {
  test('connect reads /metadata and /schema; a full episode ends terminated with the reward and success', async () => {
    await withEnv({}, {}, async (env, server) => {
      assert.deepEqual(env.id, { name: 'GuessNumber', version: '1.0.0' });
      assert.equal(env.maxActionsPerTurn, 1);
      assert.match(env.systemPrompt(), /"guess" \(a whole number from 1 to 10\)/);
      assert.match(env.systemPrompt(), /<answer>/);

      const seed = 5;
      const secret = secretFor(seed);
      const start = await env.reset(seed);
      assert.equal(start.observation, 'Guess a number between 1 and 10.');
      assert.equal(start.stateKey, canonicalJson({ text: 'Guess a number between 1 and 10.', hint: null, guesses_left: 4 }));
      assert.equal(env.render(), start.observation);

      // Binary search: at most 4 guesses for 10 numbers.
      let low = 1;
      let high = 10;
      let last;
      for (let turn = 0; turn < 4; turn++) {
        const guess = Math.floor((low + high) / 2);
        last = await env.step(reply(guess));
        assert.equal(last.actionValid, true);
        assert.equal(last.metrics.actionsExecuted, 1);
        assert.equal(last.info.action, canonicalJson({ guess: String(guess) }));
        if (last.terminated) break;
        assert.equal(last.reward, 0);
        assert.equal('success' in last.metrics, false, 'no success metric before the end');
        if (last.observation.includes('higher')) low = guess + 1;
        else high = guess - 1;
      }
      assert.ok(last);
      assert.equal(last.terminated, true);
      assert.equal(last.truncated, false);
      assert.equal(last.reward, 1);
      assert.equal(last.metrics.success, 1);
      assert.equal(last.info.doneReason, 'server-done');
      assert.equal(last.observation, `Correct, it was ${secret}.`);
      assert.equal(env.render(), last.observation);
      await assert.rejects(env.step(reply(1)), EpisodeOverError);

      const state = await env.state();
      assert.equal(state.step_count, sent(server, 0, 'step').length);
      assert.deepEqual(sent(server, 0, 'reset'), [{ type: 'reset', data: { seed } }]);
      assert.equal(server.received.length, 1, 'one connection for the whole episode');
    });
  });

  test('a done the server marks truncated, or at serverStepLimit, is truncated; otherwise terminated; no success', async () => {
    const wrong = (seed: number) => (secretFor(seed) === 1 ? 2 : 1);
    const play = async (env: OpenEnvEnvironment, seed: number) => {
      await env.reset(seed);
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await env.step(reply(wrong(seed))));
      return results;
    };
    await withEnv({ reportTruncation: true }, {}, async (env) => {
      const results = await play(env, 3);
      assert.deepEqual(
        results.map((r) => [r.terminated, r.truncated]),
        [
          [false, false],
          [false, false],
          [false, false],
          [false, true],
        ],
      );
      assert.equal(results[3]!.info.doneReason, 'server-truncated');
      assert.equal(results[3]!.info.metadata, canonicalJson({ truncated: true }));
      assert.equal(results[3]!.metrics.success, 0);
    });
    await withEnv({ reportTruncation: false }, { serverStepLimit: 4 }, async (env) => {
      const results = await play(env, 3);
      assert.equal(results[3]!.truncated, true);
      assert.equal(results[3]!.terminated, false);
    });
    await withEnv({ reportTruncation: false }, {}, async (env) => {
      const results = await play(env, 3);
      assert.equal(results[3]!.terminated, true, 'a bare done is terminated');
      assert.equal(results[3]!.metrics.success, 0, 'reward 0: no success');
    });
  });

  test('our maxTurns truncates, and reset starts a new episode on the same connection', async () => {
    await withEnv({ maxSteps: 10 }, { maxTurns: 2 }, async (env, server) => {
      await env.reset(1);
      const guess = secretFor(1) === 1 ? 2 : 1;
      assert.equal((await env.step(reply(guess))).truncated, false);
      const second = await env.step(reply(guess));
      assert.equal(second.truncated, true);
      assert.equal(second.terminated, false);
      assert.equal(second.info.doneReason, 'maxTurns');
      assert.equal(second.metrics.success, 0);
      await assert.rejects(env.step(reply(guess)), EpisodeOverError);

      await env.reset(2);
      const won = await env.step(reply(secretFor(2)));
      assert.equal(won.terminated, true);
      assert.equal(server.received.length, 1);
      assert.equal(sent(server, 0, 'reset').length, 2);
    });
  });

  test('two adapters on one server play independent environments', async () => {
    const server = await startFakeOpenEnvServer();
    const a = await OpenEnvEnvironment.connect({ url: server.url, actionField: 'guess' });
    const b = await OpenEnvEnvironment.connect({ url: server.url, actionField: 'guess' });
    try {
      await Promise.all([a.reset(4), b.reset(6)]);
      const [ra, rb] = await Promise.all([a.step(reply(secretFor(4))), b.step(reply(secretFor(4) === secretFor(6) ? 1 : secretFor(4)))]);
      assert.equal(ra.terminated, true);
      assert.equal(rb.terminated, false);
      assert.equal(server.activeSessions(), 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await server.stop();
    }
  });
});

describe('OpenEnv adapter: invalid actions', () => {
  test('no <answer> is an invalid action: nothing is sent, the state stays, a turn is used', async () => {
    await withEnv({}, { maxTurns: 2 }, async (env, server) => {
      const start = await env.reset(7);
      const invalid = await env.step('I think it is five');
      assert.equal(invalid.actionValid, false);
      assert.equal(invalid.reward, 0);
      assert.equal(invalid.terminated, false);
      assert.equal(invalid.truncated, false);
      assert.equal(invalid.metrics.actionsExecuted, 0);
      assert.match(invalid.info.problem ?? '', /no <answer>/);
      assert.equal(invalid.stateKey, start.stateKey);
      assert.equal(invalid.observation, start.observation);
      assert.equal(sent(server, 0, 'step').length, 0, 'an invalid action never reaches the server');
      // The turn counted: the next invalid one hits maxTurns 2.
      const second = await env.step('<answer></answer>');
      assert.equal(second.truncated, true);
      assert.match(second.info.problem ?? '', /empty/);
    });
  });

  test("the server's VALIDATION_ERROR (HTTP's 422) is an invalid action with the server's message; the episode goes on", async () => {
    await withEnv({}, {}, async (env, server) => {
      const start = await env.reset(8);
      const words = await env.step(reply('eleven'));
      assert.equal(words.actionValid, false);
      assert.equal(words.stateKey, start.stateKey);
      assert.match(words.info.problem ?? '', /VALIDATION_ERROR: Invalid message/);
      assert.match(words.info.problem ?? '', /int_parsing/);
      const range = await env.step(reply(42));
      assert.equal(range.actionValid, false);
      assert.match(range.info.problem ?? '', /between 1 and 10/);
      const won = await env.step(reply(secretFor(8)));
      assert.equal(won.actionValid, true);
      assert.equal(won.terminated, true);
      assert.equal(sent(server, 0, 'step').length, 3);
      assert.equal((await env.state()).step_count, 1, 'refused actions did not step the server env');
    });
  });

  test('a user actionFromText maps text to fields; null is an invalid action; validActions comes from the options', async () => {
    const options: Omit<OpenEnvOptions, 'url'> = {
      actionFromText: (text) => {
        const match = /<answer>\s*(\d+)\s*<\/answer>/.exec(text);
        return match ? { guess: Number(match[1]) } : null;
      },
      actionVocabulary: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'],
      validActions: (observation) => (observation.hint === 'correct' ? [] : ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']),
      observationToText: (observation) => `${String(observation.text)} (${String(observation.guesses_left)} left)`,
      stateKey: (observation) => `left=${String(observation.guesses_left)}`,
    };
    await withEnv({}, options, async (env, server) => {
      const start = await env.reset(9);
      assert.equal(start.observation, 'Guess a number between 1 and 10. (4 left)');
      assert.equal(start.stateKey, 'left=4');
      assert.equal(env.validActions().length, 10);
      assert.match(env.systemPrompt(), /Valid actions: 1, 2/);
      const bad = await env.step(reply('ten'));
      assert.equal(bad.actionValid, false);
      assert.match(bad.info.problem ?? '', /actionFromText/);
      const won = await env.step(reply(secretFor(9)));
      assert.equal(won.stateKey, 'left=3');
      assert.deepEqual(env.validActions(), []);
      assert.deepEqual(sent(server, 0, 'step'), [{ type: 'step', data: { guess: secretFor(9) } }]);
    });
  });
});

describe('OpenEnv adapter: errors and lifecycle', () => {
  test("a server error rejects with OpenEnvServerError carrying the server's message and code", async () => {
    await withEnv({}, {}, async (env) => {
      await env.reset(CRASHING_SEED);
      const error = await env.step(reply(5)).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenEnvServerError, String(error));
      assert.equal(error.serverCode, 'EXECUTION_ERROR');
      assert.match(error.message, /simulator crashed: unlucky seed/);
      assert.equal(error.retriable, false);
      // The connection survives a server error: a new episode works.
      await env.reset(2);
      assert.equal((await env.step(reply(secretFor(2)))).terminated, true);
    });
  });

  test('step before reset, and overlapping calls, are refused without reaching the server', async () => {
    await withEnv({}, {}, async (env, server) => {
      await assert.rejects(env.step(reply(1)), ResetNeededError);
      const first = env.reset(1);
      await assert.rejects(env.reset(2), OpenEnvConcurrentCallError);
      await first;
      assert.deepEqual(sent(server, 0, 'reset'), [{ type: 'reset', data: { seed: 1 } }]);
    });
  });

  test('close sends {"type":"close"}, the server ends the session, and the environment refuses further calls', async () => {
    const server = await startFakeOpenEnvServer();
    try {
      const env = await OpenEnvEnvironment.connect({ url: server.url, actionField: 'guess' });
      await env.reset(3);
      assert.equal(server.activeSessions(), 1);
      await env.close();
      await waitFor(() => server.activeSessions() === 0, 'the server to see the session end', 5000);
      assert.deepEqual(server.received[0]!.at(-1), { type: 'close' });
      await assert.rejects(env.reset(3), OpenEnvClosedError);
      await assert.rejects(env.step(reply(3)), OpenEnvClosedError);
      await env.close(); // twice is fine
    } finally {
      await server.stop();
    }
  });

  test('a request with no reply times out (retriable), and the next reset opens a new connection', async () => {
    await withEnv({ stallOnGuess: 3 }, { requestTimeoutMs: 300 }, async (env, server) => {
      await env.reset(0);
      const error = await env.step(reply(3)).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenEnvTimeoutError, String(error));
      assert.equal(error.retriable, true);
      await env.reset(0);
      assert.equal(server.received.length, 2, 'a second connection');
      assert.equal((await env.step(reply(secretFor(0)))).terminated, true);
    });
  });

  test('a dropped connection rejects the waiting step with OpenEnvConnectionError; reset reconnects', async () => {
    await withEnv({ dropOnGuess: 2 }, {}, async (env, server) => {
      await env.reset(0);
      const error = await env.step(reply(2)).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof OpenEnvConnectionError, String(error));
      assert.equal(error.retriable, true);
      await env.reset(0);
      assert.equal(server.received.length, 2);
      assert.equal((await env.step(reply(secretFor(0)))).terminated, true);
    });
  });
});

describe('OpenEnv adapter: connect-time checks', () => {
  let server: FakeOpenEnvServer;
  before(async () => {
    server = await startFakeOpenEnvServer();
  });
  after(async () => {
    await server.stop();
  });

  test('an action field the schema does not have is refused, naming the fields', async () => {
    await assert.rejects(OpenEnvEnvironment.connect({ url: server.url }), (e: unknown) => {
      assert.ok(e instanceof OpenEnvSchemaError);
      assert.match(e.message, /no field 'message' \(fields: metadata, guess\)/);
      return true;
    });
  });

  test('an unhealthy server is refused', async () => {
    const sick = await startFakeOpenEnvServer({ healthStatus: 'degraded' });
    try {
      await assert.rejects(OpenEnvEnvironment.connect({ url: sick.url, actionField: 'guess' }), OpenEnvUnhealthyError);
    } finally {
      await sick.stop();
    }
  });

  test('a server that is not OpenEnv, or none at all, fails with OpenEnvHttpError', async () => {
    const other = createServer((_req, res) => res.writeHead(404).end('no such page'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { port } = other.address() as AddressInfo;
    try {
      await assert.rejects(OpenEnvEnvironment.connect({ url: `http://127.0.0.1:${port}`, actionField: 'guess' }), (e: unknown) => {
        assert.ok(e instanceof OpenEnvHttpError);
        assert.equal(e.status, 404);
        assert.equal(e.retriable, false);
        return true;
      });
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
    // The port is free again: nothing listens there now.
    await assert.rejects(OpenEnvEnvironment.connect({ url: `http://127.0.0.1:${port}`, actionField: 'guess', requestTimeoutMs: 2000 }), (e: unknown) => {
      assert.ok(e instanceof OpenEnvHttpError);
      assert.equal(e.status, null);
      assert.equal(e.retriable, true);
      return true;
    });
  });
});
