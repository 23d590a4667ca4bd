// `trajflow train` (what `npm start` runs): bring up Kafka and ClickHouse, then run every part of a
// training run — sink, processors, learner, collapse detectors, actors, dashboard — as child processes against them, print
// progress and the dashboard's address, and stop every part cleanly on Ctrl-C. Running it again with the
// same run id resumes: the learner from its newest checkpoint, the actors after the last iteration they
// started (recorded in the run's state file).
//
// The decisions are pure and unit-tested: the config (config.ts), which parts start with which flags
// (part-plans.ts), what to do when a part exits (supervision.ts), what the progress and closing lines say
// (run-progress.ts), what to expect from the preset (expectations.ts). This file starts and stops the processes.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../core/config.js';
import { ensureUp } from '../../infra/up.js';
import type { Command } from '../../infra/cli/command.js';
import { parseFlagPairs } from '../../infra/cli/flags.js';
import { progressBar } from '../../infra/cli/progress.js';
import { expectationLine, TRAIN_EXPECTATIONS } from './expectations.js';
import { isKafkaNoise, STOP_ORDER, trainParts, type PartPlan } from './part-plans.js';
import { startPart, type RunningPart } from './parts.js';
import { RunProgress } from './run-progress.js';
import { TRAIN_FLAGS, buildTrainConfig, updatesOf } from './config.js';
import { EVALUATOR_GRACE_MS, RESTART_DELAY_MS, Supervision } from './supervision.js';

const USAGE =
  'trajflow train [--env FrozenLake|Sokoban|Bandit] [--run-id R] [--estimator gigpo] [--filter F] [--updates N] [--groups 8] ' +
  '[--group-size 8] [--lr 1e-3] [--max-staleness 0] [--port 18080] [--env-options JSON] [--seed 1] [--eval-every 10] [--eval-tasks 100] ' +
  '[--gateway PORT] [--actors on|off] [--config trajflow.json]';

export const trainCommand: Command = {
  summary: 'train an agent end to end: Kafka, ClickHouse, actors, processors, learner, sink and dashboard (Ctrl-C stops, rerun resumes)',
  usage: USAGE,
  async run(args) {
    if (args.includes('--help')) {
      console.log(`usage: ${USAGE}`);
      return 0;
    }
    const s = buildTrainConfig(parseFlagPairs(args, TRAIN_FLAGS, USAGE));
    const startedAt = Date.now();
    const config = loadConfig();
    console.log(`trajflow train: run ${s.runId} — ${s.env}, ${s.estimator}, ${s.groups}×${s.groupSize} episodes per iteration, lr ${s.lr}`);
    const expectation = expectationLine(s.env, TRAIN_EXPECTATIONS[s.env]);
    if (expectation) console.log(expectation);
    await ensureUp(config);
    const statePath = join(config.home, 'runs', config.topicPrefix, s.runId, 'actors.json');
    const firstIteration = await nextIteration(statePath);
    if (firstIteration > 0) console.log(`trajflow train: resuming run ${s.runId}; actors continue at iteration ${firstIteration}`);
    const progress = new RunProgress(firstIteration);
    // Updates done (of --updates when given), drawn under the parts' lines on a terminal.
    const updates = updatesOf(s);
    const bar = progressBar({
      label: `train ${s.runId}`,
      ...(updates === undefined ? {} : { total: updates }),
      unit: 'updates',
      stream: process.stdout,
      intervalMs: process.stdout.isTTY ? 250 : 30_000,
    });
    const parts = superviseParts(trainParts(s, updates), {
      write: (line) => {
        if (!isKafkaNoise(line)) bar.log(line);
      },
      onLine: (part, line) => {
        const news = progress.read(part, line);
        if (news === 'progress') bar.set(progress.updates, progress.detail());
        if (news === 'iteration') void saveIteration(statePath, progress.lastIteration);
      },
      lastIteration: () => progress.lastIteration,
    });
    console.log(`trajflow train: dashboard on http://127.0.0.1:${s.port}/  (Ctrl-C stops every part; run again to resume)`);
    if (s.gatewayPort !== null)
      console.log(
        `trajflow train: OpenAI-compatible gateway on http://127.0.0.1:${s.gatewayPort}/v1 — agents' calls are run ${s.runId}'s steps${s.actors ? ', beside the actors' : ''}`,
      );
    const onSignal = () => {
      void parts.stopAll().then(() => parts.finish({ failed: false }));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const { failed } = await parts.finished;
      bar.finish();
      await parts.stopAll();
      await saveIteration(statePath, progress.lastIteration);
      console.log(progress.stoppedLine(s.runId));
      const summary = progress.summaryLine(s.runId, Date.now() - startedAt);
      if (summary) console.log(summary);
      return failed ? 1 : 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

interface Outcome {
  readonly failed: boolean;
}

/** The parts of a run, running; `finished` resolves when the run ends (supervision.ts decides when). */
interface Supervised {
  readonly finished: Promise<Outcome>;
  finish(outcome: Outcome): void;
  /** Stops every part, in STOP_ORDER; parts that exit from then on are not started again. */
  stopAll(): Promise<void>;
}

interface PartHooks {
  readonly write: (line: string) => void;
  readonly onLine: (part: string, line: string) => void;
  readonly lastIteration: () => number;
}

function superviseParts(plans: readonly PartPlan[], hooks: PartHooks): Supervised {
  const supervision = new Supervision();
  const running = new Map<string, RunningPart>();
  let stopping = false;
  let finish!: (outcome: Outcome) => void;
  const finished = new Promise<Outcome>((resolve) => (finish = resolve));
  const launch = (plan: PartPlan) => {
    const part = startPart(
      { name: plan.name, args: plan.args(hooks.lastIteration()), ...(plan.show ? { show: plan.show } : {}), onLine: (line) => hooks.onLine(plan.name, line) },
      hooks.write,
    );
    running.set(plan.name, part);
    void part.exited.then((code) => {
      const decision = supervision.exited(plan.name, code, stopping);
      if (decision.kind === 'ignore') return;
      if (decision.kind === 'done') return afterEvaluator(running.get('evaluator'), () => finish({ failed: false }));
      console.error(decision.line);
      if (decision.kind === 'fail') return finish({ failed: true });
      setTimeout(() => {
        if (!stopping) launch(plan);
      }, RESTART_DELAY_MS);
    });
  };
  plans.forEach(launch);
  return {
    finished,
    finish,
    async stopAll() {
      if (stopping) return;
      stopping = true;
      for (const name of STOP_ORDER) await running.get(name)?.stop();
    },
  };
}

/** The evaluator ends after evaluating the final version (--until-version); the summary needs it. */
function afterEvaluator(evaluator: RunningPart | undefined, then: () => void): void {
  if (!evaluator) {
    then();
    return;
  }
  const timeout = new Promise((resolve) => setTimeout(resolve, EVALUATOR_GRACE_MS).unref());
  void Promise.race([evaluator.exited, timeout]).then(then);
}

async function nextIteration(path: string): Promise<number> {
  try {
    const state = JSON.parse(await readFile(path, 'utf8')) as { lastIteration?: number };
    return Number.isInteger(state.lastIteration) ? state.lastIteration! + 1 : 0;
  } catch {
    return 0;
  }
}

async function saveIteration(path: string, lastIteration: number): Promise<void> {
  if (lastIteration < 0) return;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify({ lastIteration }));
}
