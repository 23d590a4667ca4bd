// Unit: what the gateway answers, from values alone: a recorded call as one JSON object or SSE chunks in its
// endpoint's shape, and a finish's run and episode ids checked, with its reply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeStep } from '../../bench/load/events.js';
import { answerOf, finishEpisodeId, finishRunId, finishedBody } from '../../gateway/answer.js';
import { parseChatRequest } from '../../gateway/chat-request.js';
import { parseCompletionRequest } from '../../gateway/completion-request.js';
import { OpenAIError } from '../../gateway/openai-error.js';
import type { RecordedCall } from '../../gateway/recorder.js';

const recorded: RecordedCall = {
  callId: 'chatcmpl-1',
  timing: { upstreamMs: 0, barrierMs: 0, watermarksMs: 0, barrierWaitMs: 0, publishMs: 0, recordMs: 0 },
  steps: [makeStep({ eventTimeMs: 1_700_000_000_999 })],
  answer: {
    model: 'm',
    policyVersion: 0,
    promptText: 'user: go',
    promptTokenIds: [1],
    promptScope: 'conversation',
    choices: [{ text: 'move', tokenIds: [10], logProbs: [-0.5], tokens: ['move'], topLogProbs: [[]], finishReason: 'stop', toolCalls: null }],
    usage: { promptTokens: 1, completionTokens: 1 },
    info: {},
  },
};
const messages = [{ role: 'user', content: 'go' }];

test('a call not streamed is one object of its endpoint, with the call id and the first step second', () => {
  const chat = answerOf(parseChatRequest({ model: 'm', messages }), recorded);
  assert.ok(!chat.stream);
  const body = chat.body as { object: string; id: string; created: number };
  assert.deepEqual([body.object, body.id, body.created], ['chat.completion', 'chatcmpl-1', 1_700_000_000]);
  const text = answerOf(parseCompletionRequest({ model: 'm', prompt: 'go' }), recorded);
  assert.ok(!text.stream);
  assert.equal((text.body as { object: string }).object, 'text_completion');
});

test('a streamed call is chunks ending with [DONE]', () => {
  const chat = answerOf(parseChatRequest({ model: 'm', messages, stream: true }), recorded);
  assert.ok(chat.stream);
  assert.equal(chat.events.at(-1)?.data, '[DONE]');
  assert.match(chat.events[0]!.data, /chat\.completion\.chunk/);
});

const param = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    assert.ok(error instanceof OpenAIError);
    return [error.status, error.param];
  }
  return undefined;
};

test("a finish's episode id must be an id", () => {
  assert.equal(finishEpisodeId('ep-1'), 'ep-1');
  assert.deepEqual(
    param(() => finishEpisodeId('a b')),
    [400, 'id'],
  );
});

test("a finish's run: the header, else the body, else the gateway's; header and body must agree", () => {
  assert.equal(finishRunId('run-h', undefined, 'run-d'), 'run-h');
  assert.equal(finishRunId(undefined, 'run-b', 'run-d'), 'run-b');
  assert.equal(finishRunId(undefined, undefined, 'run-d'), 'run-d');
  assert.equal(finishRunId('run-x', 'run-x', 'run-d'), 'run-x');
  assert.deepEqual(
    param(() => finishRunId('run-h', 'run-b', 'run-d')),
    [400, 'run'],
  );
  assert.deepEqual(
    param(() => finishRunId('bad run', undefined, 'run-d')),
    [400, 'x-trajflow-run'],
  );
  assert.deepEqual(
    param(() => finishRunId(undefined, 'bad run', 'run-d')),
    [400, 'run'],
  );
});

test('the finish reply counts the steps and says how the episode ended', () => {
  const step = makeStep({ episodeId: 'e', groupId: 'g', stepIndex: 2, reward: 1, terminated: true, truncated: false });
  assert.deepEqual(finishedBody('r', 'e', [step]), {
    object: 'episode.finished',
    run_id: 'r',
    episode_id: 'e',
    steps: 3,
    reward: 1,
    terminated: true,
    truncated: false,
    trajectories: [{ episode_id: 'e', group_id: 'g', agent: null, steps: 3, reward: 1 }],
  });
});

test("the finish reply of an episode of two agents: each agent's trajectory, and the sums", () => {
  const planner = makeStep({ episodeId: 'e/planner', groupId: 'g/planner', stepIndex: 2, reward: 1.5, terminated: true, info: { agent: 'planner' } });
  const coder = makeStep({ episodeId: 'e/coder', groupId: 'g/coder', stepIndex: 1, reward: 1, terminated: true, info: { agent: 'coder' } });
  const body = finishedBody('r', 'e', [planner, coder]);
  assert.deepEqual([body.steps, body.reward], [5, 2.5]);
  assert.deepEqual(
    body.trajectories.map((t) => [t.episode_id, t.group_id, t.agent, t.steps]),
    [
      ['e/planner', 'g/planner', 'planner', 3],
      ['e/coder', 'g/coder', 'coder', 2],
    ],
  );
});
