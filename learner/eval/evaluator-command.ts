// `trajflow evaluator`: follow a run's policy versions and evaluate them on held-out tasks (see evaluator.ts).
//   trajflow evaluator --run-id R [--every 10] [--tasks 100] [--until-version N]
import type { Command } from '../../infra/cli/command.js';
import { parseFlagPairs, positiveInt, nonNegativeInt } from '../../infra/cli/flags.js';
import { loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { ensureUp } from '../../infra/up.js';
import { connectBackbone, shutdownOnSignals } from '../../streams/index.js';
import { selectBackend } from '../backend.js';
import { startEvaluator } from './evaluator.js';

const FLAGS = ['--run-id', '--every', '--tasks', '--until-version'] as const;
const USAGE = 'trajflow evaluator --run-id R [--every 10] [--tasks 100] [--until-version N]';

export const evaluatorCommand: Command = {
  summary: "evaluate a run's policy versions on held-out tasks as they come (every N versions), beside the random policy",
  usage: USAGE,
  async run(args) {
    const f = parseFlagPairs(args, FLAGS, USAGE);
    const runId = f['--run-id'];
    if (runId === undefined) throw new ConfigError(`--run-id is required; usage: ${USAGE}`);
    const config = {
      runId,
      every: positiveInt('every', f['--every'], 10),
      tasks: positiveInt('tasks', f['--tasks'], 100),
      finalVersion: f['--until-version'] === undefined ? null : nonNegativeInt('until-version', f['--until-version'], 0),
    };
    const trajflow = loadConfig();
    await ensureUp(trajflow);
    await selectBackend('auto');
    const backbone = await connectBackbone(trajflow, { clientId: `trajflow-evaluator-${runId}` });
    try {
      const run = await startEvaluator(backbone, config);
      const release = shutdownOnSignals([{ close: () => run.stop() }], { exit: false });
      try {
        await run.done;
      } finally {
        release();
      }
      return 0;
    } finally {
      await backbone.close();
    }
  },
};
