// `trajflow bench actors [--steps N] [--groups P] [--group-size G] [--json]`: for every built-in
// environment, in one run on one machine,
//  - raw: one environment stepped by the uniform-random policy (through the same Policy.act the actors
//    call), no events, no Kafka — the ceiling;
//  - actors: the rollout actors (P × G episodes in flight, random policy) publishing every step to Kafka,
//    counted once the broker acknowledged them.
// Both run until at least N steps; the ratio actors/raw is the share of the environment's speed that
// survives event building and publishing. With --json the last line is one JSON object.
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { loadConfig, type TrajflowConfig } from '../core/config.js';
import { ensureUp } from '../infra/up.js';
import { deleteTopicsUnder, ensureTopics, topicSpecs } from '../infra/topics.js';
import { actorsConfig, episodeIdOf, groupIdOf, startActors, turnSeedOf } from '../rollout/index.js';
import { createEnv, envNames, type EnvName } from '../envs/index.js';
import { UniformRandomPolicy } from '../envs/policy/index.js';
import { connectBackbone } from '../streams/index.js';
import { fmt, option } from './args.js';
import { emitResult } from './results-file.js';

export interface ActorsBenchOptions {
  /** Steps to run per environment and mode (at least; whole episodes / groups). */
  readonly steps?: number;
  readonly groups?: number;
  readonly groupSize?: number;
  readonly progress?: (line: string) => void;
  /** The services to use (default loadConfig()); the bench's topics get their own prefix. */
  readonly config?: TrajflowConfig;
}

export interface ActorsBenchResult {
  readonly envName: EnvName;
  readonly rawSteps: number;
  readonly rawStepsPerSec: number;
  readonly actorSteps: number;
  readonly actorEpisodes: number;
  readonly actorStepsPerSec: number;
  /** actorStepsPerSec / rawStepsPerSec. */
  readonly ratio: number;
}

/** One environment, stepped by the random policy as the actors do it, without events: steps/s. */
export async function rawStepRate(envName: EnvName, steps: number): Promise<{ steps: number; stepsPerSec: number }> {
  const env = createEnv(envName);
  const policy = new UniformRandomPolicy();
  let done = 0;
  const start = process.hrtime.bigint();
  for (let episode = 0; done < steps; episode++) {
    const episodeId = episodeIdOf(groupIdOf('raw', episode), 0);
    let { observation } = env.reset(episode);
    const systemPrompt = env.systemPrompt();
    for (let turn = 0; ; turn++) {
      const reply = await policy.act({
        systemPrompt,
        history: [],
        observation,
        seed: turnSeedOf(episodeId, turn),
        actionSpace: { validActions: [...env.validActions()], maxActionsPerTurn: env.maxActionsPerTurn },
      });
      const result = env.step(reply.text);
      done++;
      observation = result.observation;
      if (result.terminated || result.truncated) break;
    }
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { steps: done, stepsPerSec: done / seconds };
}

export async function measureActors(options: ActorsBenchOptions = {}): Promise<ActorsBenchResult[]> {
  const { steps = 20_000, groups = 8, groupSize = 8, progress = () => undefined } = options;
  // A prefix of its own, so the bench never mixes its events into the real topics; deleted after.
  const config: TrajflowConfig = { ...(options.config ?? loadConfig()), topicPrefix: `bench.actors.${randomUUID()}` };
  const needed = new Set(['env.steps', 'policy.versions', 'schemas', 'deadletter']);
  await ensureTopics(
    config,
    undefined,
    topicSpecs.filter((spec) => needed.has(spec.name)),
  );
  const backbone = await connectBackbone(config, { clientId: 'trajflow-bench-actors' });
  const results: ActorsBenchResult[] = [];
  try {
    for (const envName of envNames) {
      progress(`${envName}: raw environment + random policy, ${steps} steps`);
      const raw = await rawStepRate(envName, steps);
      progress(`${envName}: actors → Kafka, ${groups} × ${groupSize} episodes in flight, ${steps} steps`);
      const run = await startActors(backbone, actorsConfig({ runId: `bench-${envName}`, envName, groups, groupSize, progressEveryMs: 0 }), { write: progress });
      const start = process.hrtime.bigint();
      while (run.actors.stats.steps < steps) await new Promise((resolve) => setTimeout(resolve, 20));
      const summary = await run.stop();
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const actorStepsPerSec = summary.steps / seconds;
      results.push({
        envName,
        rawSteps: raw.steps,
        rawStepsPerSec: raw.stepsPerSec,
        actorSteps: summary.steps,
        actorEpisodes: summary.episodes,
        actorStepsPerSec,
        ratio: actorStepsPerSec / raw.stepsPerSec,
      });
    }
  } finally {
    await backbone.close();
    await deleteTopicsUnder(config);
  }
  return results;
}

/** The `bench actors` branch of `trajflow bench`: prints the table, and with --json one JSON line last. */
export async function runActorsBench(args: readonly string[]): Promise<number> {
  const steps = option(args, '--steps', 20_000);
  const groups = option(args, '--groups', 8);
  const groupSize = option(args, '--group-size', 8);
  const config = loadConfig();
  await ensureUp(config);
  const results = await measureActors({ steps, groups, groupSize, config, progress: (line) => console.error(`bench: ${line}`) });
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version };
  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}; ≥ ${steps} steps per environment and mode, ${groups} × ${groupSize} episodes in flight`);
  for (const r of results) {
    console.log(
      `${r.envName.padEnd(10)} raw env + random policy ${fmt(r.rawStepsPerSec).padStart(9)} steps/s | actors → Kafka ${fmt(r.actorStepsPerSec).padStart(7)} steps/s (${fmt(r.actorEpisodes)} episodes) | ratio ${r.ratio.toFixed(3)}`,
    );
  }
  emitResult(args, { bench: 'actors', machine, steps, groups, groupSize, results });
  return 0;
}
