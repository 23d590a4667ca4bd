// `trajflow train` (what `npm start` runs): bring up Kafka and ClickHouse, then run every part of a
// training run — sink, processors, learner, collapse detectors, actors, dashboard — as child processes against them, print
// progress and the dashboard's address, and stop every part cleanly on Ctrl-C. Running it again with the
// same run id resumes: the learner from its newest checkpoint, the actors after the last iteration they
// started (recorded in the run's state file).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { ensureUp } from '../../infra/commands.js';
import { nonNegativeInt, parseFlagPairs, positiveInt, numberFlag } from '../../infra/cli/flags.js';
import { taskSeedBase } from '../../envs/seeds.js';
import { progressBar } from '../../infra/cli/progress.js';
import type { Command } from '../../infra/cli/command.js';
import { startPart, type RunningPart } from './parts.js';
import { TRAIN_PRESETS } from './presets.js';

const FLAGS = ['--env', '--run-id', '--estimator', '--filter', '--updates', '--groups', '--group-size', '--lr', '--max-staleness', '--port', '--env-options', '--seed', '--eval-every', '--eval-tasks'] as const;
const USAGE =
  'trajflow train [--env FrozenLake|Sokoban|Bandit] [--run-id R] [--estimator gigpo] [--filter F] [--updates N] [--groups 8] ' +
  '[--group-size 8] [--lr 1e-3] [--max-staleness 0] [--port 18080] [--env-options JSON] [--seed 1] [--eval-every 10] [--eval-tasks 100] [--config trajflow.json]';

export const trainCommand: Command = {
  summary: 'train an agent end to end: Kafka, ClickHouse, actors, processors, learner, sink and dashboard (Ctrl-C stops, rerun resumes)',
  usage: USAGE,
  async run(args) {
    if (args.includes('--help')) {
      console.log(`usage: ${USAGE}`);
      return 0;
    }
    const f = parseFlagPairs(args, FLAGS, USAGE);
    const env = f['--env'] ?? 'FrozenLake';
    const preset = TRAIN_PRESETS[env];
    if (!preset) throw new ConfigError(`--env ${env}: trajflow train knows ${Object.keys(TRAIN_PRESETS).join(', ')}; for another environment start the parts yourself (trajflow actors|processors|learner)`);
    const estimator = f['--estimator'] ?? preset.estimator;
    const runId = f['--run-id'] ?? `train-${env}-${estimator}`;
    const groups = positiveInt('groups', f['--groups'], preset.groups);
    const groupSize = positiveInt('group-size', f['--group-size'], preset.groupSize);
    const lr = numberFlag('lr', f['--lr'], { positive: true }) ?? preset.learningRate;
    // Every sample trained is at most this many versions behind the learner (docs/concepts/versions-and-staleness.md).
    // Default 0, on-policy: reproducible, and the real path is the in-process loop update for update (bit for bit
    // over 250 FrozenLake updates); 1 lets the actors sample the next batch while the learner trains (≈ 1.5–1.7× the
    // updates per second here), but which version samples a batch then depends on timing (README "Learning results").
    const maxStaleness = String(nonNegativeInt('max-staleness', f['--max-staleness'], 0));
    const envOptions = f['--env-options'] ?? JSON.stringify(preset.envOptions);
    // The run seed: the model's initial weights and the training tasks (seed·1,000,000 on), as the in-process loop
    // (`trajflow bench learning`) seeds them, so the same seed gives the same run on both paths.
    const seed = nonNegativeInt('seed', f['--seed'], 1);
    if (seed >= 1000) throw new ConfigError(`--seed ${seed}: a run seed is below 1000 (its tasks start at seed·1,000,000)`);
    const taskSeeds = taskSeedBase(seed);
    // Held-out evaluation every this many versions (0: none), by the evaluator part, off the learner's path.
    const evalEvery = nonNegativeInt('eval-every', f['--eval-every'], 10);
    const evalTasks = positiveInt('eval-tasks', f['--eval-tasks'], 100);
    const startedAt = Date.now();
    let lastEval: { version: number; success: number; random: number; envSteps: number } | undefined;
    const port = f['--port'] ?? '18080';
    const filters = f['--filter'] ? [f['--filter']] : preset.filters;

    const config = loadConfig();
    console.log(`trajflow train: run ${runId} — ${env}, ${estimator}, ${groups}×${groupSize} episodes per iteration, lr ${lr}`);
    await ensureUp(config);
    const statePath = join(config.home, 'runs', config.topicPrefix, runId, 'actors.json');
    const firstIteration = await nextIteration(statePath);
    if (firstIteration > 0) console.log(`trajflow train: resuming run ${runId}; actors continue at iteration ${firstIteration}`);
    let lastIteration = firstIteration - 1;

    // kafkajs logs retriable coordinator moves and rebalances as errors; they are noise here.
    const noise = /not the correct coordinator|rebalancing|The group is rebalancing|concurrent operation on the same transaction/;
    // Updates done (of --updates when given), drawn under the parts' lines on a terminal.
    const updates = f['--updates'] === undefined ? undefined : positiveInt('updates', f['--updates'], 1);
    const bar = progressBar({ label: `train ${runId}`, ...(updates === undefined ? {} : { total: updates }), unit: 'updates', stream: process.stdout, intervalMs: process.stdout.isTTY ? 250 : 30_000 });
    // The progress line's detail: the newest policy version and the newest held-out evaluation.
    const progress = { updates: 0, policy: '', heldOut: '', detail: () => [progress.policy, progress.heldOut].filter(Boolean).join(', ') };
    const write = (line: string) => {
      if (!noise.test(line)) bar.log(line);
    };
    // Supervision: a part that exits on its own (e.g. the processors abort a transaction when the broker
    // goes away, by design) is started again, up to MAX_RESTARTS times; the run ends when the learner
    // finishes its --updates, on Ctrl-C, or when a part keeps failing.
    const MAX_RESTARTS = 5;
    const running = new Map<string, RunningPart>();
    const restarts = new Map<string, number>();
    let stopping = false;
    let finish!: (outcome: { failed: boolean }) => void;
    const finished = new Promise<{ failed: boolean }>((resolve) => (finish = resolve));
    const launch = (name: string, partArgs: () => string[], show?: (line: string) => boolean, onLine?: (line: string) => void) => {
      const part = startPart({ name, args: partArgs(), ...(show ? { show } : {}), ...(onLine ? { onLine } : {}) }, write);
      running.set(name, part);
      void part.exited.then((code) => {
        if (stopping) return;
        if (name === 'evaluator' && code === 0) return;
        if (name === 'learner' && code === 0) {
          // The evaluator ends after evaluating the final version (--until-version); the summary needs it.
          const evaluator = running.get('evaluator');
          if (!evaluator) return finish({ failed: false });
          const timeout = new Promise((resolve) => setTimeout(resolve, 600_000).unref());
          return void Promise.race([evaluator.exited, timeout]).then(() => finish({ failed: false }));
        }
        const count = (restarts.get(name) ?? 0) + 1;
        restarts.set(name, count);
        if (count > MAX_RESTARTS) {
          console.error(`trajflow train: ${name} exited with ${code} ${count} times; stopping the other parts`);
          return finish({ failed: true });
        }
        console.error(`trajflow train: ${name} exited with ${code}; starting it again (${count}/${MAX_RESTARTS})`);
        setTimeout(() => {
          if (!stopping) launch(name, partArgs, show, onLine);
        }, 2000);
      });
    };
    const quietStartup = (line: string) => !/^(sink|processors|dashboard): \{/.test(line);
    launch('sink', () => [], quietStartup);
    // The preset's estimator options only belong to the preset's estimator.
    const estimatorOptions = estimator === preset.estimator && preset.estimatorOptions ? ['--estimator-options', JSON.stringify(preset.estimatorOptions)] : [];
    const optimizer = preset.optimizer ?? {};
    // Actors and learner build version 0 from the same shape and seed, so the actors' v0 is the learner's.
    const model = ['--model', JSON.stringify({ ...preset.model, seed })];
    // The actors' steps name their iteration, so the processors make one rollout batch per iteration (closed by
    // its last group); these settings batch the groups of another producer in the same run alike.
    const batching = ['--max-batch-groups', String(groups), '--batch-window-ms', '5000'];
    launch('processors', () => ['--estimator', estimator, ...estimatorOptions, '--group-size', String(groupSize), ...batching, ...filters.flatMap((name) => ['--filter', name])], quietStartup);
    launch(
      'learner',
      () => [
        '--run-id', runId, '--env', env, '--env-options', envOptions, '--lr', String(lr), '--max-staleness', maxStaleness, ...model,
        '--optimizer', JSON.stringify(optimizer),
        ...(preset.loss ? ['--loss', JSON.stringify(preset.loss)] : []),
        ...(f['--updates'] ? ['--updates', f['--updates']] : []),
      ],
      (line) => !line.startsWith('learner: config'),
      (line) => {
        const match = /update (\d+) → v(\d+)/.exec(line);
        if (!match) return;
        progress.updates = Number(match[1]) + 1; // updates count from 0
        progress.policy = `policy v${match[2]}`;
        bar.set(progress.updates, progress.detail());
      },
    );
    launch('detectors', () => ['--run-id', runId], (line) => /alert|error|Error/i.test(line));
    if (evalEvery > 0) {
      launch(
        'evaluator',
        () => ['--run-id', runId, '--every', String(evalEvery), '--tasks', String(evalTasks), ...(updates === undefined ? [] : ['--until-version', String(updates)])],
        undefined,
        (line) => {
          const match = /^evaluator: v(\d+) held-out ([\d.]+) \(random ([\d.]+), \d+ tasks(?:, (\d+) env steps)?/.exec(line);
          if (!match) return;
          lastEval = { version: Number(match[1]), success: Number(match[2]), random: Number(match[3]), envSteps: Number(match[4] ?? -1) };
          progress.heldOut = `held-out ${match[2]} at v${match[1]} (random ${match[3]})`;
          bar.set(progress.updates, progress.detail());
        },
      );
    }
    launch('dashboard', () => ['--port', port], (line) => /http:\/\/|error|Error/.test(line));
    launch(
      'actors',
      // A restarted actors process continues after the last iteration any earlier one started.
      () => ['--env', env, '--run-id', runId, '--groups', String(groups), '--group-size', String(groupSize), '--max-staleness', maxStaleness, '--env-options', envOptions, '--first-iteration', String(lastIteration + 1), '--progress-ms', '2000', ...model, '--seed', String(taskSeeds)],
      (line) => !line.startsWith('actors: {'),
      (line) => {
        const match = /iteration (\d+)/.exec(line);
        if (match && Number(match[1]) > lastIteration) {
          lastIteration = Number(match[1]);
          void saveIteration(statePath, lastIteration);
        }
      },
    );
    console.log(`trajflow train: dashboard on http://127.0.0.1:${port}/  (Ctrl-C stops every part; run again to resume)`);

    const stopAll = async () => {
      if (stopping) return;
      stopping = true;
      // Actors first (they finish the groups they started and report their last iteration), then the
      // learner, then the consumers.
      for (const name of ['actors', 'learner', 'processors', 'detectors', 'dashboard', 'sink']) await running.get(name)?.stop();
    };
    const onSignal = () => {
      void stopAll().then(() => finish({ failed: false }));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const { failed } = await finished;
      bar.finish();
      await stopAll();
      await saveIteration(statePath, lastIteration);
      console.log(`trajflow train: stopped run ${runId} (actors reached iteration ${lastIteration})`);
      if (lastEval) {
        const steps = lastEval.envSteps >= 0 ? `, ${lastEval.envSteps} env steps` : '';
        console.log(`trajflow train: run ${runId} — held-out success ${lastEval.success.toFixed(3)} (random policy ${lastEval.random.toFixed(3)}) at v${lastEval.version}${steps}, ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
      }
      return failed ? 1 : 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  },
};

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
