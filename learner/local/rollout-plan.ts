// Which episodes one iteration of the in-process loop plays (pure): P groups × G rollouts, each with the context the
// actors give it on the real path — group and episode ids, the group's training task seed (consecutive tasks per
// iteration, offset by the run seed, all below the held-out seeds), the iteration and its P — so that the same seed
// samples the same episodes on both paths (test/learner/loop/path-equivalence.int.spec.ts).
import { episodeIdOf, groupIdOf, groupSeedOf } from '../../rollout/ids.js';
import type { EpisodeContext } from '../../rollout/step-event.js';
import type { EnvId } from '../../envs/contract.js';
import { taskSeedBase } from '../../envs/seeds.js';

export interface RolloutPlan {
  readonly runId: string;
  readonly env: EnvId;
  readonly groups: number;
  readonly groupSize: number;
  /** The run seed (taskSeedBase). */
  readonly seed: number;
  /** Cycle over this many distinct tasks; undefined: a fresh task per group. */
  readonly tasks?: number;
}

/** The iteration's episodes, group by group, rollout by rollout: the order they start in. */
export function iterationEpisodes(plan: RolloutPlan, iteration: number): EpisodeContext[] {
  const episodes: EpisodeContext[] = [];
  for (let g = 0; g < plan.groups; g++) {
    const groupId = groupIdOf(plan.runId, iteration * plan.groups + g);
    const taskIndex = iteration * plan.groups + g;
    const groupSeed = groupSeedOf(taskSeedBase(plan.seed), plan.tasks ? taskIndex % plan.tasks : taskIndex);
    for (let rollout = 0; rollout < plan.groupSize; rollout++) {
      episodes.push({
        runId: plan.runId,
        env: plan.env,
        groupId,
        episodeId: episodeIdOf(groupId, rollout),
        groupSize: plan.groupSize,
        groupSeed,
        rollout,
        iteration,
        batchGroups: plan.groups,
      });
    }
  }
  return episodes;
}
