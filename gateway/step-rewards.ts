// Where a finish's rewards go: `turn_rewards` by step index and `call_rewards` by the answer's id, resolved
// against the trajectories the finish ends (the episode's, or each agent's), into the step rewards each outcome
// step names (info.stepRewards; the processors move them onto their steps). Pure: a reward that no step of
// those trajectories can take is a 400 naming it.
import { invalidParam } from './openai-error.js';
import type { EpisodeOutcome } from './record.js';

/** What a finish knows of one trajectory it ends. */
export interface RewardedTrajectory {
  readonly episodeId: string;
  /** Its turns so far: step indices 0 .. turns − 1. */
  readonly turns: number;
  /** The step index of each answer id. */
  readonly calls: ReadonlyMap<string, number>;
}

function credit(rewards: Map<number, number>, stepIndex: number, reward: number): void {
  rewards.set(stepIndex, (rewards.get(stepIndex) ?? 0) + reward);
}

function turnRewards(outcome: EpisodeOutcome, trajectories: readonly RewardedTrajectory[], into: Map<number, number>[]): void {
  if (outcome.turnRewards.length === 0) return;
  if (trajectories.length !== 1) {
    const ids = trajectories.map((t) => t.episodeId).join(', ');
    throw invalidParam(
      'turn_rewards',
      `the episode has ${trajectories.length} trajectories (${ids.slice(0, 200)}), one per agent: give each call's reward by its answer id in call_rewards`,
    );
  }
  const { turns } = trajectories[0]!;
  if (outcome.turnRewards.length > turns) throw invalidParam('turn_rewards', `has ${outcome.turnRewards.length} values but the episode has ${turns} turns`);
  outcome.turnRewards.forEach((reward, i) => credit(into[0]!, i, reward));
}

/** The step rewards of each trajectory, in the order given. */
export function stepRewardsOf(outcome: EpisodeOutcome, trajectories: readonly RewardedTrajectory[]): Map<number, number>[] {
  const out = trajectories.map(() => new Map<number, number>());
  turnRewards(outcome, trajectories, out);
  for (const [callId, reward] of Object.entries(outcome.callRewards ?? {})) {
    const at = trajectories.findIndex((t) => t.calls.has(callId));
    if (at === -1) {
      throw invalidParam(`call_rewards.${callId.slice(0, 100)}`, "is not the id of an answered call of this episode (the `id` of the call's answer)");
    }
    credit(out[at]!, trajectories[at]!.calls.get(callId)!, reward);
  }
  return out;
}
