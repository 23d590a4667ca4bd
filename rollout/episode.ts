// One episode from reset to its end: ask the policy each turn, step the environment, publish the turn's
// step event. Publishing does not wait for the broker between turns (acks come back in batches); the
// episode is done once every one of its events is acknowledged.
import type { Environment } from '../envs/contract.js';
import type { AsyncEnvironment } from '../envs/openenv/async-environment.js';
import { assertTrainingSeed } from '../envs/seeds.js';
import type { HistoryEntry, Policy } from '../envs/policy/policy.js';
import type { StepEvent } from '../schemas/index.js';
import { samplingKeyOf, turnSeedOf } from './ids.js';
import { buildStepEvent, type EpisodeContext, type StateBefore } from './step-event.js';

export type PublishStep = (event: StepEvent) => Promise<void>;

export interface EpisodeRun {
  readonly context: EpisodeContext;
  /** A built-in (synchronous) environment or one served elsewhere (asynchronous). */
  readonly env: Environment | AsyncEnvironment;
  /** Read once, before the first turn: the whole episode uses one policy version. */
  readonly policy: Policy;
  readonly publish: PublishStep;
  readonly clock: () => number;
}

export interface EpisodeOutcome {
  readonly steps: number;
  readonly totalReward: number;
  readonly success: boolean;
  readonly terminated: boolean;
  readonly policyVersion: number;
}

export async function runEpisode(run: EpisodeRun): Promise<EpisodeOutcome> {
  const { context, env, policy, publish, clock } = run;
  // Training never resets with a held-out seed (seeds.ts).
  assertTrainingSeed(context.groupSeed);
  const reset = await env.reset(context.groupSeed);
  const systemPrompt = env.systemPrompt();
  const history: HistoryEntry[] = [];
  const acks: Promise<void>[] = [];
  let before: StateBefore = { observation: reset.observation, stateKey: reset.stateKey };
  let totalReward = 0;
  try {
    for (let stepIndex = 0; ; stepIndex++) {
      const reply = await policy.act({
        systemPrompt,
        history: [...history],
        observation: before.observation,
        seed: turnSeedOf(samplingKeyOf(context), stepIndex),
        actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn: env.maxActionsPerTurn },
      });
      const result = await env.step(reply.text);
      const event = buildStepEvent(context, { stepIndex, before, reply, policyVersion: policy.version, result, eventTimeMs: clock() });
      const ack = publish(event);
      ack.catch(() => undefined); // handled below; keeps an early failure from being "unhandled"
      acks.push(ack);
      totalReward += result.reward;
      history.push({ role: 'observation', text: before.observation }, { role: 'action', text: reply.text });
      before = { observation: result.observation, stateKey: result.stateKey };
      if (result.terminated || result.truncated) {
        return { steps: stepIndex + 1, totalReward, success: result.metrics.success === 1, terminated: result.terminated, policyVersion: policy.version };
      }
    }
  } finally {
    await Promise.all(acks);
  }
}
