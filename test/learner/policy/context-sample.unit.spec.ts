// The design's key property, on WASM: for episodes played by a TransformerPolicy (runEpisode on FrozenLake), the training sample the processors build from the step events (trajectoryFromSteps, buildSample at trajectory level) holds, before each turn's action, exactly the token context the policy sampled that action in, and the action's tokens and log-probs after it, with lossMask 1 on action tokens only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectBackend } from '../../../learner/backend.js';
import { createPolicyBundle, disposeBundle } from '../../../learner/policy/bundle.js';
import { contextIds } from '../../../learner/policy/context.js';
import { TransformerPolicy } from '../../../learner/policy/transformer-policy.js';
import { runEpisode } from '../../../rollout/episode.js';
import { episodeIdOf, groupIdOf } from '../../../rollout/ids.js';
import { createEnv } from '../../../envs/registry.js';
import type { Policy, PolicyReply, PolicyRequest } from '../../../envs/policy/policy.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { buildSample } from '../../../processors/samples/index.js';
import type { StepEvent } from '../../../schemas/index.js';

await selectBackend('wasm');

test("sample.tokenIds before each action = the policy's context for that turn; actions and log-probs follow", async () => {
  const bundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, seed: 4 });
  try {
    const inner = new TransformerPolicy({ ...bundle, version: 3, temperature: 1.3 });
    let turnsChecked = 0;
    let multiTurn = 0;
    for (let rollout = 0; rollout < 12; rollout++) {
      // Records what the policy was asked and what it answered, turn by turn.
      const turns: { request: PolicyRequest; reply: PolicyReply }[] = [];
      const recording: Policy = {
        version: inner.version,
        act: async (request) => {
          const reply = await inner.act(request);
          turns.push({ request, reply });
          return reply;
        },
      };
      const env = createEnv('FrozenLake');
      const steps: StepEvent[] = [];
      const groupId = groupIdOf('run-ctx', rollout);
      const context = { runId: 'run-ctx', env: env.id, groupId, episodeId: episodeIdOf(groupId, 0), groupSize: 1, groupSeed: 4000 + rollout, rollout: 0, iteration: 0 };
      await runEpisode({ context, env, policy: recording, clock: () => 0, publish: async (e) => void steps.push(e) });
      const { trajectory } = trajectoryFromSteps(steps);
      const sample = buildSample(
        trajectory,
        { level: 'trajectory', advantage: 0.5 },
        { estimator: 'grpo', group: { size: 1, rewardMean: 0, rewardStd: 0 }, tokenizer: bundle.tokenizer },
      );

      assert.equal(turns.length, steps.length);
      if (turns.length > 1) multiTurn++;
      let at = 0;
      for (const [t, { request, reply }] of turns.entries()) {
        const expected = contextIds(bundle.tokenizer, bundle.vocabulary, request.history, request.observation, request.actionSpace!.maxActionsPerTurn).context;
        assert.deepEqual(sample.tokenIds.slice(0, expected.length), expected, `rollout ${rollout} turn ${t}: context`);
        assert.ok(
          sample.lossMask.slice(at, expected.length).every((m) => m === 0),
          `rollout ${rollout} turn ${t}: the turn's prompt tokens are masked`,
        );
        const end = expected.length + reply.tokenIds.length;
        assert.deepEqual(sample.tokenIds.slice(expected.length, end), reply.tokenIds, `rollout ${rollout} turn ${t}: action tokens`);
        assert.deepEqual(
          sample.lossMask.slice(expected.length, end),
          reply.tokenIds.map(() => 1),
        );
        assert.deepEqual(sample.behaviourLogProbs.slice(expected.length, end), reply.logProbs.map(Math.fround));
        at = end;
        turnsChecked++;
      }
      assert.equal(sample.tokenIds.length, at, `rollout ${rollout}: nothing after the last action`);
    }
    assert.ok(multiTurn >= 3, `only ${multiTurn} multi-turn episodes`);
    assert.ok(turnsChecked >= 20, `only ${turnsChecked} turns`);
  } finally {
    disposeBundle(bundle);
  }
});
