// Unit: the book of episodes rebuilt from logged steps (another life's or another instance's turns), retries
// that make the last turn an orphan, and the read barrier a call waits on before its turn index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EpisodeBook } from '../../gateway/episodes.js';
import type { CallIdentity } from '../../gateway/identity.js';
import type { OpenAIError } from '../../gateway/openai-error.js';
import { ReadBarrier } from '../../gateway/read-barrier.js';
import { outcomeStep, turnStep } from '../../gateway/record.js';
import type { UpstreamAnswer } from '../../gateway/upstream.js';

const identity: CallIdentity = { runId: 'r', groupId: 'g', episodeId: 'e', envName: 'Chat', groupSize: 2 };

const answerOf = (prompt: number[], ids: number[]): UpstreamAnswer => ({
  model: 'm',
  policyVersion: 1,
  promptText: 'user: x',
  promptTokenIds: prompt,
  promptScope: 'conversation',
  choices: [{ text: 'ab', tokenIds: ids, logProbs: ids.map(() => -1), tokens: [], topLogProbs: [], finishReason: 'stop', toolCalls: null }],
  usage: { promptTokens: prompt.length, completionTokens: ids.length },
  info: {},
});

/** The step another gateway would have published for turn `stepIndex`. */
const logged = (stepIndex: number, newPrompt: number[], ids: number[], extra: { requestHash?: string; orphans?: number[] } = {}) => {
  const answer = answerOf(newPrompt, ids);
  return turnStep({
    identity,
    episodeId: 'e',
    stepIndex,
    answer,
    choice: answer.choices[0]!,
    observationTokenIds: newPrompt,
    callId: `call-${stepIndex}`,
    upstreamName: 'u',
    startedAtMs: 1000 + stepIndex,
    upstreamMs: 1,
    promptDrift: false,
    requestHash: extra.requestHash ?? `h${stepIndex}`,
    orphans: extra.orphans ?? [],
  });
};

test('a book fed from the log continues an episode at the next index, with the token context of its turns', () => {
  const book = new EpisodeBook({ timeoutMs: 60_000 });
  book.observe(logged(0, [1, 2], [3]));
  book.observe(logged(1, [4], [5, 6]));
  book.observe(logged(1, [4], [5, 6]));
  const state = book.get('r', 'e')!;
  assert.deepEqual([state.nextStep, state.context, state.identity.groupSize, state.lastActivityMs], [2, [1, 2, 3, 4, 5, 6], 2, 1001]);
  assert.equal(book.callStep('r', 'e', 'call-1'), 1);
  assert.deepEqual(book.reserve(identity, 5000, 'h-new'), { stepIndex: 2, context: [1, 2, 3, 4, 5, 6], orphans: [] });
  book.observe(outcomeStep(identity, 3, 1, { reward: 1, turnRewards: [], success: true, terminated: true, truncated: false, reason: 'finish' }, 6000));
  assert.equal(book.endedAs('r', 'e'), 'finished');
  assert.throws(
    () => book.checkOpen(identity),
    (e: OpenAIError) => e.status === 409,
  );
  book.observe(logged(4, [9], [9]));
  assert.equal(book.get('r', 'e'), undefined, 'a late turn of an ended episode opens nothing');
});

test('a retry of the last turn (same request hash) makes that turn an orphan and extends the context before it', () => {
  const book = new EpisodeBook({ timeoutMs: 60_000 });
  book.observe(logged(0, [1, 2], [3]));
  book.observe(logged(1, [4], [5], { requestHash: 'same' }));
  const retry = book.reserve(identity, 2000, 'same');
  assert.deepEqual(retry, { stepIndex: 2, context: [1, 2, 3], orphans: [1] });
  // Another instance reads the retry's step: its prompt ids extend the context before the orphan.
  const other = new EpisodeBook({ timeoutMs: 60_000 });
  for (const step of [logged(0, [1, 2], [3]), logged(1, [4], [5], { requestHash: 'same' }), logged(2, [4], [7], { requestHash: 'same', orphans: [1] })]) other.observe(step);
  assert.deepEqual(other.get('r', 'e')!.context, [1, 2, 3, 4, 7]);
  assert.equal(other.reserve(identity, 3000, 'other').orphans.length, 0);
});

test('a turn whose client went away is named an orphan by the next step, once', () => {
  const book = new EpisodeBook({ timeoutMs: 60_000 });
  book.reserve(identity, 0, 'a');
  book.commit(identity, { stepIndex: 0, requestHash: 'a', callId: 'c0', contextBefore: null, context: null, orphans: [] }, 0, 0);
  book.markOrphan('r', 'e', 0);
  const next = book.reserve(identity, 10, 'b');
  assert.deepEqual(next.orphans, [0]);
  book.commit(identity, { stepIndex: 1, requestHash: 'b', callId: 'c1', contextBefore: null, context: null, orphans: next.orphans }, 0, 10);
  assert.deepEqual(book.reserve(identity, 20, 'c').orphans, []);
});

test('the read barrier releases a call once every partition is read up to its arrival, and fails it after a timeout', async () => {
  const barrier = new ReadBarrier(new Map([[0, 5n]]));
  assert.equal(barrier.reached(new Map([[0, 5n]])), true);
  const waiting = barrier.wait(
    new Map([
      [0, 7n],
      [1, 1n],
    ]),
    5000,
  );
  let released = false;
  void waiting.then(() => (released = true));
  barrier.read(0, 6n);
  await Promise.resolve();
  assert.equal(released, false, 'partition 1 is not read yet');
  barrier.read(1, 0n);
  await waiting;
  await assert.rejects(barrier.wait(new Map([[2, 1n]]), 20), /not read up to/);
  barrier.fail(new Error('consumer stopped'));
  await assert.rejects(barrier.wait(new Map([[0, 1n]]), 20), /consumer stopped/);
});
