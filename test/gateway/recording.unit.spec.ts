// Unit: who a call belongs to, the turn indices and contexts of open episodes, and the step events a turn
// and an episode's end become.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateIngestStep } from '../../schemas/index.js';
import { EpisodeBook, newPromptIds, type CommittedTurn } from '../../gateway/episodes.js';
import { callIdentity, type CallIdentity } from '../../gateway/identity.js';
import type { OpenAIError } from '../../gateway/openai-error.js';
import { choiceEpisodeId, gatewayEventId, outcomeStep, turnStep } from '../../gateway/record.js';
import type { UpstreamAnswer } from '../../gateway/upstream.js';

const defaults = { runId: 'run-d', envName: 'Chat' };
const headers = (map: Record<string, string>) => (name: string) => map[name];

test('identity: headers, else metadata, else the defaults and the call id', () => {
  assert.deepEqual(callIdentity(headers({}), {}, defaults, 'chatcmpl-1'), { runId: 'run-d', groupId: 'chatcmpl-1', episodeId: 'chatcmpl-1', envName: 'Chat', groupSize: null });
  const fromHeaders = callIdentity(
    headers({ 'x-trajflow-run': 'r', 'x-trajflow-group': 'g', 'x-trajflow-episode': 'e', 'x-trajflow-env': 'FrozenLake', 'x-trajflow-group-size': '4' }),
    {},
    defaults,
    'c',
  );
  assert.deepEqual(fromHeaders, { runId: 'r', groupId: 'g', episodeId: 'e', envName: 'FrozenLake', groupSize: 4 });
  const fromMetadata = callIdentity(headers({}), { trajflow_run: 'r2', trajflow_episode: 'e2' }, defaults, 'c');
  assert.deepEqual([fromMetadata.runId, fromMetadata.groupId, fromMetadata.episodeId], ['r2', 'e2', 'e2']);
  // The same value in both places is fine; different values are a bug in the agent.
  assert.equal(callIdentity(headers({ 'x-trajflow-run': 'r' }), { trajflow_run: 'r' }, defaults, 'c').runId, 'r');
  assert.throws(
    () => callIdentity(headers({ 'x-trajflow-run': 'r' }), { trajflow_run: 'other' }, defaults, 'c'),
    (e: OpenAIError) => e.param === 'metadata.trajflow_run',
  );
  assert.throws(
    () => callIdentity(headers({ 'x-trajflow-episode': 'has space' }), {}, defaults, 'c'),
    (e: OpenAIError) => e.param === 'x-trajflow-episode' && e.status === 400,
  );
  assert.throws(
    () => callIdentity(headers({}), { trajflow_group_size: '0' }, defaults, 'c'),
    (e: OpenAIError) => e.param === 'metadata.trajflow_group_size',
  );
  assert.throws(
    () => callIdentity(headers({ 'x-trajflow-group-size': '4097' }), {}, defaults, 'c'),
    (e: OpenAIError) => e.param === 'x-trajflow-group-size',
  );
});

const identity: CallIdentity = { runId: 'r', groupId: 'g', episodeId: 'e', envName: 'Chat', groupSize: 2 };
const turn = (stepIndex: number, context: number[] | null, requestHash = `h${stepIndex}`): CommittedTurn => ({
  stepIndex,
  requestHash,
  callId: `c${stepIndex}`,
  contextBefore: null,
  context,
  orphans: [],
});

test('episodes: turn indices in order, a failed publish gives its index back, an ended episode refuses calls', () => {
  const book = new EpisodeBook({ timeoutMs: 1000 });
  assert.equal(book.reserve(identity, 0).stepIndex, 0);
  book.commit(identity, turn(0, [1, 2, 3]), 4, 10);
  const second = book.reserve(identity, 20);
  assert.deepEqual(second, { stepIndex: 1, context: [1, 2, 3], orphans: [] });
  book.abandon(identity, 1);
  assert.equal(book.reserve(identity, 30).stepIndex, 1, 'the abandoned index is handed out again');
  book.commit(identity, turn(1, null), 2, 30);
  const state = book.finish('r', 'e');
  assert.equal(state?.nextStep, 2);
  assert.equal(state?.policyVersion, 4, 'the newest version that answered');
  assert.equal(book.finish('r', 'e'), undefined);
  assert.equal(book.endedAs('r', 'e'), 'finished');
  assert.throws(
    () => book.reserve(identity, 40),
    (e: OpenAIError) => e.status === 409 && e.param === 'x-trajflow-episode',
  );
  book.reopen(state!);
  assert.equal(book.reserve(identity, 50).stepIndex, 2, 'a reopened episode continues');
});

test('episodes: an episode idle for the timeout is expired once; activity postpones it', () => {
  const book = new EpisodeBook({ timeoutMs: 1000 });
  book.reserve(identity, 0);
  book.reserve({ ...identity, episodeId: 'e2' }, 500);
  assert.deepEqual(book.expire(999), []);
  assert.deepEqual(
    book.expire(1000).map((s) => s.identity.episodeId),
    ['e'],
  );
  assert.equal(book.endedAs('r', 'e'), 'timed-out');
  assert.equal(book.openCount, 1);
  assert.deepEqual(
    book.expire(1500).map((s) => s.identity.episodeId),
    ['e2'],
  );
});

test('a turn records only the prompt ids its context does not hold; drift records the whole prompt', () => {
  assert.deepEqual(newPromptIds(null, [1, 2]), { ids: [1, 2], drift: false });
  assert.deepEqual(newPromptIds([1, 2, 3], [1, 2, 3, 4, 5]), { ids: [4, 5], drift: false });
  assert.deepEqual(newPromptIds([1, 9], [1, 2, 3]), { ids: [1, 2, 3], drift: true });
});

const answer: UpstreamAnswer = {
  model: 'm',
  policyVersion: 3,
  promptText: 'user: hi',
  promptTokenIds: [5, 6],
  promptScope: 'turn',
  choices: [{ text: 'yo', tokenIds: [7, 8], logProbs: [-0.5, -0.25], tokens: ['y', 'o'], topLogProbs: [[], []], finishReason: 'stop', toolCalls: [{ id: 't' }] }],
  usage: { promptTokens: 2, completionTokens: 2 },
  info: { seed: '9' },
};

test('a turn step carries the exact ids and log-probs, the version, the model and the timing; it passes ingest validation', () => {
  const step = turnStep({
    identity,
    episodeId: 'e',
    stepIndex: 1,
    answer,
    choice: answer.choices[0]!,
    observationTokenIds: [5, 6],
    callId: 'chatcmpl-x',
    upstreamName: 'policy',
    startedAtMs: 1_700_000_000_000,
    upstreamMs: 12.5,
    promptDrift: false,
    requestHash: 'abc',
    orphans: [0],
  });
  assert.deepEqual(validateIngestStep(step), { ok: true });
  assert.deepEqual([step.observation, step.observationTokenIds, step.action, step.actionTokenIds, step.actionLogProbs], ['user: hi', [5, 6], 'yo', [7, 8], [-0.5, -0.25]]);
  assert.equal(step.policyVersion, 3);
  assert.equal(step.terminated || step.truncated, false);
  assert.deepEqual(step.metrics, { upstreamMs: 12.5, promptTokens: 2, completionTokens: 2 });
  assert.equal(step.info.model, 'm');
  assert.equal(step.info.groupSize, '2');
  assert.equal(step.info.toolCalls, '[{"id":"t"}]');
  assert.deepEqual([step.info.requestHash, step.info.orphans, step.info.promptScope], ['abc', '[0]', undefined]);
  assert.equal(step.eventId, gatewayEventId('r', 'e', 1));
  assert.notEqual(step.eventId, gatewayEventId('r', 'e', 2));
});

test('the outcome step ends the episode: no tokens, the reward (plus per-turn rewards), the end flags and success', () => {
  const step = outcomeStep(identity, 4, 3, { reward: 1, turnRewards: [0.25, 0.5], success: true, terminated: true, truncated: false, reason: 'finish' }, 1_700_000_000_000);
  assert.deepEqual(validateIngestStep(step), { ok: true });
  assert.deepEqual([step.stepIndex, step.actionTokenIds, step.observationTokenIds, step.reward, step.terminated, step.truncated], [4, [], [], 1.75, true, false]);
  assert.deepEqual(step.metrics, { success: 1 });
  assert.equal(step.info.turnRewards, '[0.25,0.5]');
  const timedOut = outcomeStep(identity, 0, 0, { reward: 0, turnRewards: [], success: null, terminated: false, truncated: true, reason: 'timeout' }, 1);
  assert.deepEqual([timedOut.truncated, timedOut.info.gatewayOutcome, timedOut.metrics], [true, 'timeout', {}]);
  assert.equal(choiceEpisodeId('e', 0), 'e');
  assert.equal(choiceEpisodeId('e', 2), 'e:n2');
});
