import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventNames, validateEvent, type EventName, type EventTypes } from '../../schemas/index.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';

type Case<N extends EventName> = [name: string, change: Partial<EventTypes[N]>, field?: string];

function table<N extends EventName>(event: N, valid: Case<N>[], invalid: Required<Case<N>>[]): void {
  describe(`validateEvent('${event}')`, () => {
    for (const [name, change] of valid) {
      test(`accepts ${name}`, () => assert.deepStrictEqual(validateEvent(event, { ...sampleEvents[event], ...change }), { ok: true }));
    }
    for (const [name, change, field] of invalid) {
      test(`rejects ${name} (${field})`, () => {
        const result = validateEvent(event, { ...sampleEvents[event], ...change });
        assert.equal(result.ok, false);
        if (!result.ok) {
          assert.equal(result.field, field, result.message);
          assert.ok(result.message.length > 5);
        }
      });
    }
  });
}

test('every fixture event and 500 makeStep events are valid', () => {
  for (const event of eventNames) assert.deepStrictEqual(validateEvent(event, sampleEvents[event]), { ok: true }, event);
  for (let seed = 0; seed < 500; seed++) assert.deepStrictEqual(validateEvent('step', makeStep({}, seed)), { ok: true });
});

table(
  'step',
  [
    ['terminated and truncated together (Gymnasium allows it)', { terminated: true, truncated: true }],
    ['no observation tokens and no state key', { observationTokenIds: null, stateKey: null }],
    ['an empty action', { action: '', actionTokenIds: [], actionLogProbs: [] }],
    ['a log-prob of exactly 0', { actionTokenIds: [1], actionLogProbs: [0] }],
    ['a negative reward', { reward: -1 }],
    ['a NaN metric (metrics are measurements)', { metrics: { loss: NaN } }],
  ],
  [
    ['an empty event id', { eventId: '' }, 'eventId'],
    ['an empty group id', { groupId: '' }, 'groupId'],
    ['a negative step index', { stepIndex: -1 }, 'stepIndex'],
    ['fewer log-probs than tokens', { actionTokenIds: [1, 2, 3], actionLogProbs: [-1, -1] }, 'actionLogProbs'],
    ['a positive log-prob', { actionTokenIds: [1, 2], actionLogProbs: [-1, 0.5] }, 'actionLogProbs[1]'],
    ['a NaN log-prob', { actionTokenIds: [1, 2], actionLogProbs: [NaN, -1] }, 'actionLogProbs[0]'],
    ['a -Infinity log-prob', { actionTokenIds: [1], actionLogProbs: [-Infinity] }, 'actionLogProbs[0]'],
    ['a negative token id', { actionTokenIds: [-3], actionLogProbs: [-1] }, 'actionTokenIds[0]'],
    ['a negative observation token id', { observationTokenIds: [1, -2] }, 'observationTokenIds[1]'],
    ['a NaN reward', { reward: NaN }, 'reward'],
    ['an infinite reward', { reward: Infinity }, 'reward'],
    ['a negative policy version', { policyVersion: -1 }, 'policyVersion'],
    ['an empty state key', { stateKey: '' }, 'stateKey'],
    ['no event time', { eventTimeMs: 0 }, 'eventTimeMs'],
    ['an event time after year 9999 (Python cannot decode it)', { eventTimeMs: 253_402_300_800_000 }, 'eventTimeMs'],
  ],
);

const trajectorySteps = sampleEvents.trajectory.steps;
table(
  'trajectory',
  [
    ['a new outcome string', { outcome: 'aborted_by_user' }],
    ['an empty incomplete episode', { outcome: 'incomplete', steps: [], stepCount: 0, invalidActions: 0 }],
  ],
  [
    ['a step count that disagrees with steps', { stepCount: 5 }, 'stepCount'],
    ['an empty outcome', { outcome: '' }, 'outcome'],
    ['more invalid actions than steps', { invalidActions: 4 }, 'invalidActions'],
    ['max policy version below min', { minPolicyVersion: 2, maxPolicyVersion: 1 }, 'maxPolicyVersion'],
    ['last event before first', { lastEventTimeMs: sampleEvents.trajectory.firstEventTimeMs - 1 }, 'lastEventTimeMs'],
    ['steps out of order', { steps: [trajectorySteps[1]!, trajectorySteps[0]!, trajectorySteps[2]!] }, 'steps[1].stepIndex'],
    ['a step log-prob mismatch', { steps: trajectorySteps.map((s, i) => (i === 2 ? { ...s, actionLogProbs: [] } : s)) }, 'steps[2].actionLogProbs'],
    ['a step outside the policy version range', { steps: trajectorySteps.map((s, i) => (i === 0 ? { ...s, policyVersion: 9 } : s)) }, 'steps[0].policyVersion'],
  ],
);

const sample = sampleEvents.sample;
table(
  'sample',
  [
    ['step advantages (GiGPO)', { estimator: 'gigpo', stepAdvantages: [0.5, -0.25, 1] }],
    ['no rollout batch (a v1 sample, a replay)', { batch: null }],
    ['a batch that names no iteration', { batch: { batchId: 'b', iteration: -1, samples: 1 } }],
  ],
  [
    ['no tokens', { tokenIds: [], lossMask: [], advantages: [], behaviourLogProbs: [] }, 'tokenIds'],
    ['a short loss mask', { lossMask: sample.lossMask.slice(1) }, 'lossMask'],
    ['a short advantages array', { advantages: sample.advantages.slice(1) }, 'advantages'],
    ['a long behaviour log-prob array', { behaviourLogProbs: [...sample.behaviourLogProbs, -1] }, 'behaviourLogProbs'],
    ['a mask value of 2', { lossMask: sample.lossMask.map((m, i) => (i === 4 ? 2 : m)) }, 'lossMask[4]'],
    ['a log-prob on a masked-out token', { behaviourLogProbs: sample.behaviourLogProbs.map((lp, i) => (i === 0 ? -0.3 : lp)) }, 'behaviourLogProbs[0]'],
    ['nothing in the loss', { lossMask: sample.lossMask.map(() => 0), behaviourLogProbs: sample.behaviourLogProbs.map(() => 0) }, 'lossMask'],
    ['a NaN advantage', { advantages: sample.advantages.map((a, i) => (i === 3 ? NaN : a)) }, 'advantages[3]'],
    ['a negative group std', { groupRewardStd: -0.1 }, 'groupRewardStd'],
    ['a group of 0', { groupSize: 0 }, 'groupSize'],
    ['no estimator', { estimator: '' }, 'estimator'],
    ['a NaN step advantage', { stepAdvantages: [0, NaN] }, 'stepAdvantages[1]'],
    ['a batch without an id', { batch: { batchId: '', iteration: 0, samples: 8 } }, 'batch.batchId'],
    ['a batch of iteration -2', { batch: { batchId: 'b', iteration: -2, samples: 8 } }, 'batch.iteration'],
    ['a batch of 0 samples', { batch: { batchId: 'b', iteration: 0, samples: 0 } }, 'batch.samples'],
  ],
);

table(
  'learner_step',
  [
    ['a NaN loss (what the collapse detector must see)', { totalLoss: NaN, policyLoss: NaN, gradNormPreClip: Infinity }],
    ['no low-side clip fraction', { clipFractionLow: null }],
  ],
  [
    ['a clip fraction above 1', { clipFraction: 1.2 }, 'clipFraction'],
    ['a negative learning rate', { learningRate: -1e-6 }, 'learningRate'],
    ['a negative token count', { tokens: -1 }, 'tokens'],
    ['no backend', { backend: '' }, 'backend'],
    ['a negative staleness', { stalenessMax: -1 }, 'stalenessMax'],
  ],
);

table(
  'policy_version',
  [['the initial policy', { version: 0, parentVersion: null }]],
  [
    ['a checksum that is not sha256 hex', { checksum: 'abc' }, 'checksum'],
    ['an upper-case checksum', { checksum: sampleEvents.policy_version.checksum.toUpperCase() }, 'checksum'],
    ['a parent at or after the version', { parentVersion: 42 }, 'parentVersion'],
    ['no weights', { weightsUri: '' }, 'weightsUri'],
  ],
);

table(
  'collapse_alert',
  [['a NaN value (kind nan)', { kind: 'nan', value: NaN, severity: 'critical' }]],
  [
    ['an unknown severity', { severity: 'meh' }, 'severity'],
    ['no kind', { kind: '' }, 'kind'],
    ['no message', { message: '' }, 'message'],
  ],
);

table(
  'evaluation',
  [
    ['the initial policy, trained on nothing, env steps unknown', { policyVersion: 0, trainedIteration: -1, envSteps: -1 }],
    ['no options', { envOptions: '{}' }],
    ['success rates at the bounds', { greedySuccess: 1, randomSuccess: 0 }],
    ['a negative mean reward (a penalised env)', { meanReward: -0.5 }],
  ],
  [
    ['an empty run id', { runId: '' }, 'runId'],
    ['a negative policy version', { policyVersion: -1 }, 'policyVersion'],
    ['a trained iteration below -1', { trainedIteration: -2 }, 'trainedIteration'],
    ['a fractional trained iteration', { trainedIteration: 1.5 }, 'trainedIteration'],
    ['env steps below -1', { envSteps: -2 }, 'envSteps'],
    ['an empty env name', { envName: '' }, 'envName'],
    ['options that are not JSON', { envOptions: '{slippery: false}' }, 'envOptions'],
    ['options that are a JSON array', { envOptions: '[1, 2]' }, 'envOptions'],
    ['options that are JSON null', { envOptions: 'null' }, 'envOptions'],
    ['options that are a JSON string', { envOptions: '"slippery"' }, 'envOptions'],
    ['empty options', { envOptions: '' }, 'envOptions'],
    ['no tasks', { tasks: 0 }, 'tasks'],
    ['a greedy success above 1', { greedySuccess: 1.01 }, 'greedySuccess'],
    ['a NaN greedy success', { greedySuccess: NaN }, 'greedySuccess'],
    ['a negative random success', { randomSuccess: -0.1 }, 'randomSuccess'],
    ['a NaN mean reward', { meanReward: NaN }, 'meanReward'],
    ['an infinite mean episode length', { meanSteps: Infinity }, 'meanSteps'],
    ['a NaN duration', { durationMs: NaN }, 'durationMs'],
    ['a negative duration', { durationMs: -1 }, 'durationMs'],
    ['no event time', { eventTimeMs: 0 }, 'eventTimeMs'],
  ],
);

table(
  'dead_letter',
  [['a record from the HTTP API', { sourceTopic: 'http', sourcePartition: -1, sourceOffset: -1, key: null }]],
  [
    ['no reason', { reason: '' }, 'reason'],
    ['a partition below -1', { sourcePartition: -2 }, 'sourcePartition'],
  ],
);

test('a value that does not even fit the schema is reported, not thrown', () => {
  const result = validateEvent('step', { ...makeStep(), actionTokenIds: undefined } as never);
  assert.equal(result.ok, false);
});
