// The diagnosis of `bench learning --diagnose` (pure parts): a FrozenLake observation back to its map and player, the
// per-layer gradient norms, and one batch's signal — zero-variance groups, |A| by token kind, and the advantage
// against the BFS-optimal action.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diagnoseSignal, layerNorms, parseLakeObservation, sokobanOptimalFrom } from '../../bench/learning-diagnostics.js';
import type { BatchOutput, RawGroup } from '../../processors/pipeline/process-batch.js';
import type { TrainingSampleEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';

test('sokobanOptimalFrom: the pushes that bring the box one action closer to its target, as Up/Down/Left/Right indices', () => {
  assert.deepEqual(sokobanOptimalFrom('#####\n#_O_#\n#_X_#\n#_P_#\n#####'), [0], 'box above the player, target above the box: Up');
  assert.deepEqual(sokobanOptimalFrom('######\n#PX_O#\n#____#\n######'), [3], 'target to the right of the box: Right');
  assert.deepEqual(sokobanOptimalFrom('#####\n#_√_#\n#_P_#\n#####'), [], 'solved: nothing to do');
  assert.equal(sokobanOptimalFrom('P_O_\n____\n_O__\n___G'), null, 'not a Sokoban room');
});

test('parseLakeObservation reads the rendered map: holes, goal and player; anything else is null', () => {
  const parsed = parseLakeObservation('P_O_\n____\n_O__\n___G');
  assert.ok(parsed);
  assert.equal(parsed.player, 0);
  assert.equal(parsed.map.goal, 15);
  assert.deepEqual(
    parsed.map.tiles.map((t, i) => (t === 'H' ? i : -1)).filter((i) => i >= 0),
    [2, 9],
  );
  assert.equal(parseLakeObservation('X___\n____\n____\n___G'), null, 'a finished state has no player');
  assert.equal(parseLakeObservation('not a map'), null);
});

test('layerNorms sums the squares of each layer: embeddings, blocks, the head', () => {
  const norms = layerNorms(
    new Map([
      ['embed/tokens', 3],
      ['embed/positions', 4],
      ['block0/attn/qkv/kernel', 1],
      ['head/kernel', 2],
    ]),
  );
  assert.deepEqual(norms, { embed: 5, block0: 1, head: 2 });
});

const step = (observation: string, action: string): TrajectoryStep => ({ stepIndex: 0, observation, action, actionValid: true, reward: 0 }) as unknown as TrajectoryStep;

const trajectory = (episodeId: string, success: boolean, steps: TrajectoryStep[]): TrajectoryEvent =>
  ({ episodeId, success, totalReward: success ? 1 : 0, steps }) as unknown as TrajectoryEvent;

/** A sample of one prompt token then one action token per step, with the given advantage on each action. */
const sample = (episodeId: string, actionIds: number[], advantages: number[]): TrainingSampleEvent =>
  ({
    episodeId,
    tokenIds: actionIds.flatMap((id) => [3, id]),
    lossMask: actionIds.flatMap(() => [0, 1]),
    advantages: advantages.flatMap((a) => [0, a]),
  }) as unknown as TrainingSampleEvent;

test('diagnoseSignal: a group that disagrees, one that does not, and the advantage against the optimal move', () => {
  // Player at 0, goal at 1: Right is the only optimal move.
  const map = 'PG__\n____\n____\n____';
  const groups: RawGroup[] = [
    { groupId: 'g0', trajectories: [trajectory('e0', true, [step(map, '<answer>Right</answer>')]), trajectory('e1', false, [step(map, '<answer>Down</answer>')])] },
    { groupId: 'g1', trajectories: [trajectory('e2', false, [step(map, '<answer>Up</answer>')]), trajectory('e3', false, [step(map, '<answer>Up</answer>')])] },
  ];
  const [RIGHT, DOWN, UP] = [301, 302, 303];
  const output = { samples: [sample('e0', [RIGHT], [0.5]), sample('e1', [DOWN], [-0.5]), sample('e2', [UP], [0]), sample('e3', [UP], [0])] } as unknown as BatchOutput;
  const d = diagnoseSignal(groups, output, 'FrozenLake', new Set([RIGHT, DOWN, UP]));
  assert.equal(d.zeroVarianceGroups, 0.5);
  assert.equal(d.groupsAllFailed, 0.5);
  assert.equal(d.actionTokens, 4);
  assert.equal(d.formatTokens, 0);
  assert.equal(d.meanAbsAdvantageAction, 0.25);
  assert.equal(d.zeroAdvantageActions, 0.5);
  assert.equal(d.optimalAmongPositive, 1);
  assert.equal(d.optimalAmongNegative, 0);
  assert.equal(d.optimalActionsTaken, 0.25);
  assert.ok(d.advantageOptimalCorrelation !== null && d.advantageOptimalCorrelation > 0.8);
  assert.equal(diagnoseSignal(groups, output, 'Sokoban', new Set([RIGHT, DOWN, UP])).advantageOptimalCorrelation, null);
});
