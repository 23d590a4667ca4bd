// What the gateway's fault tests check on the log after their agents finished: every answered call recorded
// exactly once, turn indices 0..n-1 per episode with no duplicate or hole, every turn nobody saw answered named
// an orphan, and (with the real processors) one trajectory and one sample per episode whose tokens are the
// conversation each agent really had. Not a spec file.
import assert from 'node:assert/strict';
import type { TrajflowConfig } from '../../core/config.js';
import type { Backbone } from '../../streams/index.js';
import type { StepEvent } from '../../schemas/index.js';
import { readEvents, waitFor } from '../helpers/kafka.js';
import { fixturePromptIds, type AgentRecord } from './fault-agents.js';

export interface RunFigures {
  steps: number;
  answered: number;
  orphans: number;
  retries: number;
  trajectories: number;
  samples: number;
}

const orphansNamed = (steps: readonly StepEvent[]): Set<number> => new Set(steps.flatMap((s) => (s.info.orphans ? (JSON.parse(s.info.orphans) as number[]) : [])));

/** One episode's steps against what its agent saw; returns how many orphans it holds. */
function checkEpisode(agent: AgentRecord, steps: readonly StepEvent[]): number {
  const indices = steps.map((s) => s.stepIndex).sort((a, b) => a - b);
  assert.deepEqual(indices, [...indices.keys()], `${agent.episodeId}: turn indices 0..n-1, no duplicate, no hole`);
  const last = steps.find((s) => s.stepIndex === indices.length - 1)!;
  assert.equal(last.terminated, true, `${agent.episodeId}: ends with its outcome step`);
  const turns = steps.filter((s) => s !== last);
  for (const id of agent.answered) {
    assert.equal(turns.filter((s) => s.info.callId === id).length, 1, `${agent.episodeId}: answer ${id} recorded exactly once`);
  }
  const named = orphansNamed(steps);
  const unanswered = turns.filter((s) => !agent.answered.includes(s.info.callId!));
  for (const step of unanswered) assert.ok(named.has(step.stepIndex), `${agent.episodeId}: unanswered turn ${step.stepIndex} is named an orphan`);
  assert.equal(named.size, unanswered.length, `${agent.episodeId}: only unanswered turns are orphans`);
  assert.ok(!steps.some((s) => s.info.promptDrift), `${agent.episodeId}: every turn's prompt extends the context rebuilt from the log`);
  return unanswered.length;
}

/** Checks the run's steps, trajectories and samples against the agents' records. */
export async function checkRun(backbone: Pick<Backbone, 'kafka' | 'codec'>, config: TrajflowConfig, runId: string, agents: readonly AgentRecord[]): Promise<RunFigures> {
  const ofRun = <T extends { runId: string }>(events: T[]) => events.filter((e) => e.runId === runId);
  const steps = ofRun(await readEvents(backbone, config, 'env.steps', 'step'));
  let orphans = 0;
  for (const agent of agents)
    orphans += checkEpisode(
      agent,
      steps.filter((s) => s.episodeId === agent.episodeId),
    );
  await waitFor(async () => ofRun(await readEvents(backbone, config, 'samples', 'sample')).length >= agents.length, 'a sample of every episode', 180_000, 500);
  const trajectories = ofRun(await readEvents(backbone, config, 'trajectories', 'trajectory'));
  const samples = ofRun(await readEvents(backbone, config, 'samples', 'sample'));
  for (const agent of agents) {
    const mine = trajectories.filter((t) => t.episodeId === agent.episodeId);
    assert.equal(mine.length, 1, `${agent.episodeId}: one trajectory`);
    assert.equal(mine[0]!.outcome, 'terminated');
    const sample = samples.filter((s) => s.episodeId === agent.episodeId);
    assert.equal(sample.length, 1, `${agent.episodeId}: one sample`);
    const expected = [...fixturePromptIds(agent.messages), ...Array.from(agent.lastAnswer, (c) => c.charCodeAt(0))];
    assert.deepEqual(sample[0]!.tokenIds, expected, `${agent.episodeId}: the sample is the conversation the agent had, orphans left out`);
  }
  return {
    steps: steps.length,
    answered: agents.reduce((n, a) => n + a.answered.length, 0),
    orphans,
    retries: agents.reduce((n, a) => n + a.retries, 0),
    trajectories: trajectories.length,
    samples: samples.length,
  };
}
