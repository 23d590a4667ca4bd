// Unit: which child processes `trajflow train` starts, in which order, with which flags, which of their lines it
// shows (cli/train/part-plans.ts): the actors and the learner get the same model shape and seed (their version 0
// is the same), the same bound and environment; a restarted actors process continues after the last iteration.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isKafkaNoise, STOP_ORDER, trainParts } from '../../cli/train/part-plans.js';
import { buildTrainConfig, updatesOf } from '../../cli/train/config.js';

const ENV_OPTIONS = '{"slippery":false,"maxActionsPerTurn":1,"maxTurns":10,"maxActionsPerEpisode":10}';
const MODEL = '{"attentionSpan":"turn","positionMode":"grid","nonEmptyReplies":true,"gridNeighbours":true,"seed":1}';

test('FrozenLake with --updates 20: every part and its flags', () => {
  const s = buildTrainConfig({ '--updates': '20', '--run-id': 'r' });
  const parts = trainParts(s, updatesOf(s));
  assert.deepEqual(
    parts.map((p) => p.name),
    ['sink', 'processors', 'learner', 'detectors', 'evaluator', 'dashboard', 'actors'],
  );
  const args = Object.fromEntries(parts.map((p) => [p.name, p.args(-1)]));
  assert.deepEqual(args, {
    sink: [],
    processors: ['--estimator', 'gigpo', '--estimator-options', '{"omega":3,"gamma":0.7}', '--group-size', '8', '--max-batch-groups', '8', '--batch-window-ms', '5000'],
    learner: [
      '--run-id',
      'r',
      '--env',
      'FrozenLake',
      '--env-options',
      ENV_OPTIONS,
      '--lr',
      '0.001',
      '--max-staleness',
      '0',
      '--model',
      MODEL,
      '--optimizer',
      '{"epochs":2,"minibatches":2,"schedule":"cosine","totalUpdates":400}',
      '--loss',
      '{"centerByAction":true,"entropyCoeff":0.2,"entropyTarget":0.7}',
      '--updates',
      '20',
    ],
    detectors: ['--run-id', 'r'],
    evaluator: ['--run-id', 'r', '--every', '10', '--tasks', '100', '--until-version', '20'],
    dashboard: ['--port', '18080'],
    actors: [
      '--env',
      'FrozenLake',
      '--run-id',
      'r',
      '--groups',
      '8',
      '--group-size',
      '8',
      '--max-staleness',
      '0',
      '--env-options',
      ENV_OPTIONS,
      '--first-iteration',
      '0',
      '--progress-ms',
      '2000',
      '--model',
      MODEL,
      '--seed',
      '1000000',
    ],
  });
  assert.deepEqual(
    parts
      .find((p) => p.name === 'actors')!
      .args(41)
      .slice(12, 14),
    ['--first-iteration', '42'],
    'a restart continues after the last iteration started',
  );
});

test('without --updates and with --eval-every 0: no evaluator, the learner runs until stopped; another estimator gets no preset options', () => {
  const s = buildTrainConfig({ '--eval-every': '0', '--estimator': 'grpo', '--filter': 'zero_variance' });
  const parts = trainParts(s, updatesOf(s));
  assert.deepEqual(
    parts.map((p) => p.name),
    ['sink', 'processors', 'learner', 'detectors', 'dashboard', 'actors'],
  );
  assert.ok(
    !parts
      .find((p) => p.name === 'learner')!
      .args(-1)
      .includes('--updates'),
  );
  assert.deepEqual(parts.find((p) => p.name === 'processors')!.args(-1), [
    '--estimator',
    'grpo',
    '--group-size',
    '8',
    '--max-batch-groups',
    '8',
    '--batch-window-ms',
    '5000',
    '--filter',
    'zero_variance',
  ]);
});

test("which lines show: no start-up dumps, the learner's config, or kafkajs rebalance noise; the dashboard's address and alerts do", () => {
  const show = Object.fromEntries(trainParts(buildTrainConfig({}), undefined).map((p) => [p.name, p.show ?? (() => true)]));
  assert.equal(show.sink!('sink: {"topics":1}'), false);
  assert.equal(show.processors!('processors: {"estimator":"gigpo"}'), false);
  assert.equal(show.learner!('learner: config {}'), false);
  assert.equal(show.learner!('learner: update 0 → v1  loss 0.1'), true);
  assert.equal(show.detectors!('detector: started'), false);
  assert.equal(show.detectors!('ALERT template collapse'), true);
  assert.equal(show.dashboard!('dashboard on http://127.0.0.1:18080/'), true);
  assert.equal(show.actors!('actors: {"groups":8}'), false);
  assert.equal(isKafkaNoise('[learner] The group is rebalancing, so a rejoin is needed'), true);
  assert.equal(isKafkaNoise('[learner] learner: update 3 → v4'), false);
});

test('stop order: the gateway and the actors first, then the learner and the evaluator, then the consumers; every part has its place', () => {
  assert.deepEqual([...STOP_ORDER], ['gateway', 'actors', 'learner', 'evaluator', 'processors', 'detectors', 'dashboard', 'sink']);
  const all = trainParts(buildTrainConfig({ '--gateway': '18090', '--updates': '5' }), 5).map((p) => p.name);
  assert.deepEqual(
    all.filter((name) => !(STOP_ORDER as readonly string[]).includes(name)),
    [],
    'a part missing from STOP_ORDER would never be stopped',
  );
});

test("--gateway: the gateway serves the run's own policy with the learner's model, seed and temperature; --actors off drops the actors", () => {
  const s = buildTrainConfig({ '--gateway': '18090', '--run-id': 'r', '--actors': 'off' });
  const parts = trainParts(s, undefined);
  assert.deepEqual(
    parts.map((p) => p.name),
    ['sink', 'processors', 'learner', 'detectors', 'evaluator', 'dashboard', 'gateway'],
  );
  const learner = parts.find((p) => p.name === 'learner')!.args(-1);
  const gateway = parts.find((p) => p.name === 'gateway')!;
  assert.deepEqual(gateway.args(-1), ['--upstream', 'policy', '--run-id', 'r', '--env', 'FrozenLake', '--port', '18090', '--temperature', '1', '--model', MODEL]);
  assert.equal(learner[learner.indexOf('--model') + 1], MODEL, 'the same model (and seed) as the learner');
  assert.equal(gateway.show!('gateway: OpenAI base URL http://127.0.0.1:18090/v1 (upstream …)'), true);
  const withActors = trainParts(buildTrainConfig({ '--gateway': '18090' }), undefined).map((p) => p.name);
  assert.deepEqual(withActors.slice(-2), ['gateway', 'actors']);
});
