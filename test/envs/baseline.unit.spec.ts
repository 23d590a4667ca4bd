// The random policy's success rate on 200 held-out seeds per environment: the baseline the learner must
// beat (issue 4). Each band is the expected rate ± 4 standard errors for 200 episodes; the expected
// rates are exact for Bandit (uniform over two arms) and measured on 10,000 training seeds for the others
// (FrozenLake 0.224, Sokoban 0.169, ToolUse 0.0012 at the commit that added this test).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { baselineSuccessRate, measureBaseline } from '../../envs/baseline.js';
import { envNames, type EnvName } from '../../envs/registry.js';
import { EVAL_SEEDS } from '../../envs/seeds.js';

const EXPECTED: Record<EnvName, number> = { Bandit: 0.5, FrozenLake: 0.224, Sokoban: 0.169, ToolUse: 0.0012 };
const EPISODES = 200;

describe('random-policy baseline on held-out seeds', () => {
  const seeds = EVAL_SEEDS.take(EPISODES);
  for (const name of envNames) {
    test(name, () => {
      const result = measureBaseline(name, seeds);
      const p = EXPECTED[name];
      const halfWidth = Math.max(4 * Math.sqrt((p * (1 - p)) / EPISODES), 0.025);
      console.log(
        `# baseline ${name}: success ${result.successRate.toFixed(3)} (band ${Math.max(0, p - halfWidth).toFixed(3)}..${(p + halfWidth).toFixed(3)}), ` +
          `mean return ${result.meanReturn.toFixed(3)}, mean turns ${result.meanTurns.toFixed(2)}, ${result.episodes} held-out seeds`,
      );
      assert.ok(Math.abs(result.successRate - p) <= halfWidth, `${name} success ${result.successRate} outside ${p} ± ${halfWidth}`);
      assert.equal(baselineSuccessRate(name, seeds), result.successRate, 'seeded: the same number twice');
    });
  }
});
