// Unit: the OpenEnv adapter's pure pieces: WebSocket framing, message parsing, text mappings, and
// the synchronous → asynchronous environment wrapper.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BanditEnv } from '../../../envs/bandit.js';
import { formatReply } from '../../../envs/actions.js';
import { ResetNeededError } from '../../../envs/errors.js';
import { FrameDecoder, OPCODE, encodeFrame } from '../../../envs/openenv/websocket/frame.js';
import { WebSocketProtocolError } from '../../../envs/openenv/websocket/errors.js';
import { acceptValueFor } from '../../../envs/openenv/websocket/handshake.js';
import { parseServerMessage } from '../../../envs/openenv/protocol.js';
import { OpenEnvProtocolError, answerIntoField, canonicalJson, observationText, toAsyncEnvironment, webSocketUrl } from '../../../envs/openenv/index.js';

test('frames round-trip masked and unmasked, at every length class, across arbitrary chunk boundaries', () => {
  for (const length of [0, 1, 125, 126, 65535, 65536, 200_000]) {
    for (const mask of [true, false]) {
      const payload = Buffer.alloc(length, 0x61 + (length % 26));
      const bytes = encodeFrame(OPCODE.text, payload, mask);
      const decoder = new FrameDecoder(1 << 20);
      const frames = [];
      for (let i = 0; i < bytes.length; i += 7919) frames.push(...decoder.push(bytes.subarray(i, i + 7919)));
      assert.equal(frames.length, 1);
      assert.equal(frames[0]!.fin, true);
      assert.equal(frames[0]!.opcode, OPCODE.text);
      assert.ok(frames[0]!.payload.equals(payload), `length ${length} mask ${mask}`);
    }
  }
});

test('the decoder refuses oversize frames, reserved bits and long control frames', () => {
  assert.throws(
    () => new FrameDecoder(10).push(encodeFrame(OPCODE.text, Buffer.alloc(11), false)),
    (e: unknown) => e instanceof WebSocketProtocolError && e.closeCode === 1009,
  );
  const reserved = encodeFrame(OPCODE.text, Buffer.from('x'), false);
  reserved[0] = reserved[0]! | 0x40;
  assert.throws(
    () => new FrameDecoder(10).push(reserved),
    (e: unknown) => e instanceof WebSocketProtocolError && e.closeCode === 1002,
  );
  assert.throws(() => new FrameDecoder(1000).push(encodeFrame(OPCODE.ping, Buffer.alloc(126), false)), WebSocketProtocolError);
});

test("the handshake's accept value matches RFC 6455's example", () => {
  assert.equal(acceptValueFor('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
});

test('server messages: observation, state and error parse; anything else is a protocol error', () => {
  assert.deepEqual(parseServerMessage('{"type":"observation","data":{"observation":{"a":1},"reward":null,"done":false}}'), {
    type: 'observation',
    data: { observation: { a: 1 }, reward: null, done: false },
  });
  const withMetadata = parseServerMessage('{"type":"observation","data":{"observation":{},"reward":true,"done":true,"metadata":{"truncated":true}}}');
  assert.deepEqual(withMetadata, { type: 'observation', data: { observation: {}, reward: 1, done: true, metadata: { truncated: true } } });
  assert.deepEqual(parseServerMessage('{"type":"state","data":{"episode_id":"e","step_count":3,"extra":1}}'), {
    type: 'state',
    data: { episode_id: 'e', step_count: 3, extra: 1 },
  });
  assert.deepEqual(parseServerMessage('{"type":"error","data":{"message":"boom","code":"EXECUTION_ERROR"}}'), {
    type: 'error',
    data: { message: 'boom', code: 'EXECUTION_ERROR' },
  });
  for (const bad of [
    'nope',
    '{"type":"observation"}',
    '{"type":"mystery","data":{}}',
    '{"type":"observation","data":{"observation":{},"reward":"1","done":false}}',
    '{"type":"observation","data":{"observation":{},"reward":1}}',
  ]) {
    assert.throws(() => parseServerMessage(bad), OpenEnvProtocolError, bad);
  }
});

test('mappings: <answer> into a field, observation text fields then canonical JSON, sorted-key JSON', () => {
  const toAction = answerIntoField('message');
  assert.deepEqual(toAction('<think>hm</think><answer> hello </answer>'), { ok: true, action: { message: 'hello' } });
  assert.deepEqual(toAction('hello'), { ok: false, problem: 'no <answer>…</answer> found' });
  assert.deepEqual(toAction('<answer> </answer>'), { ok: false, problem: 'the answer is empty' });
  const text = observationText(['text', 'prompt']);
  assert.equal(text({ prompt: 'p', text: 't' }), 't');
  assert.equal(text({ prompt: 'p' }), 'p');
  assert.equal(text({ b: [2, { d: 1, c: null }], a: 1 }), '{"a":1,"b":[2,{"c":null,"d":1}]}');
  assert.equal(canonicalJson({ b: 1, a: { y: 2, x: 1 } }), canonicalJson({ a: { x: 1, y: 2 }, b: 1 }));
  assert.equal(webSocketUrl('http://127.0.0.1:8000'), 'ws://127.0.0.1:8000/ws');
  assert.equal(webSocketUrl('https://host/envs/echo/'), 'wss://host/envs/echo/ws');
});

test('toAsyncEnvironment drives a built-in environment through the asynchronous contract', async () => {
  const env = toAsyncEnvironment(new BanditEnv());
  assert.equal(env.isAsync, true);
  assert.equal(toAsyncEnvironment(env), env, 'an async environment is returned as it is');
  await assert.rejects(env.step(formatReply(['x'])), ResetNeededError);
  const start = await env.reset(3);
  assert.equal(typeof start.observation, 'string');
  const result = await env.step(formatReply([env.validActions()[0]!]));
  assert.equal(result.terminated, true);
  assert.equal(env.id.name, 'Bandit');
  await env.close();
});
