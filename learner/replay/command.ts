// `trajflow replay`: select stored trajectories of a run, recompute rewards and advantages with today's
// settings, and publish them to <prefix>.samples marked as replayed (see run-replay.ts and select.ts).
//   trajflow replay --run-id R [--source kafka|clickhouse] [--success true] [--min-version 3] … [--estimator grpo]
import { readFileSync } from 'node:fs';
import { numberFlag, parseFlagPairs, positiveInt } from '../../infra/cli/flags.js';
import { progressBar, type ProgressBar } from '../../infra/cli/progress.js';
import type { Command } from '../../infra/cli/command.js';
import { loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { ensureUp } from '../../infra/up.js';
import type { ProcessingConfig } from '../../processors/pipeline/process-batch.js';
import type { FilterName } from '../../processors/filters/registry.js';
import { connectBackbone } from '../../streams/index.js';
import { buildReplayProcessing, formatReplayReport, startReplay, type ReplayProcessing } from './run-replay.js';
import { buildSelection, type ReplaySelection } from './select.js';

const FLAGS = [
  '--run-id',
  '--source',
  '--fetch',
  '--from-ms',
  '--to-ms',
  '--partition',
  '--from-offset',
  '--to-offset',
  '--min-version',
  '--max-version',
  '--min-reward',
  '--success',
  '--include-incomplete',
  '--limit',
  '--estimator',
  '--filters',
  '--processing',
  '--min-group-size',
  '--complete-groups',
  '--batch-groups',
  '--replay-id',
  '--into-run',
] as const;
const SWITCHES = ['--dry-run', '--json'] as const;

export const REPLAY_USAGE =
  'trajflow replay --run-id R [--source kafka|clickhouse] [--fetch auto|kafka|steps] [--from-ms T] [--to-ms T] [--partition P] ' +
  '[--from-offset O] [--to-offset O] [--min-version V] [--max-version V] [--min-reward X] [--success true|false] ' +
  '[--include-incomplete false] [--limit N] [--estimator grpo|dr_grpo|rloo|starpo|reinforce_plus_plus|reinforce_plus_plus_baseline|gigpo] ' +
  '[--filters dynamic_sampling,starpo_s_variance,ragen2_snr_top_p] [--processing processing.json] [--min-group-size 2] ' +
  '[--complete-groups false] [--batch-groups 64] [--replay-id ID] [--into-run R2] [--dry-run] [--json]';

export interface ReplayArgs {
  readonly selection: ReplaySelection;
  readonly processing: ReplayProcessing;
  readonly dryRun: boolean;
  readonly json: boolean;
}

/** Boolean switches out of the args (they take no value), the rest for parseFlagPairs. */
export function takeSwitches<S extends string>(args: readonly string[], switches: readonly S[]): { rest: string[]; on: Set<S> } {
  const on = new Set<S>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    // Only where a flag name is expected: `--replay-id --json` stays for parseFlagPairs to reject (missing value).
    if ((switches as readonly string[]).includes(arg) && rest.length % 2 === 0) on.add(arg as S);
    else rest.push(arg);
  }
  return { rest, on };
}

function boolFlag(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`--${name} needs true or false, got '${raw}'`);
}

function intFlag(name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min) throw new ConfigError(`--${name} needs an integer >= ${min}, got '${raw}'`);
  return value;
}

/** Flags → a checked selection and processing (ConfigError with the usage on anything wrong). */
export function parseReplayArgs(args: readonly string[]): ReplayArgs {
  const { rest, on } = takeSwitches(args, SWITCHES);
  const f = parseFlagPairs(rest, FLAGS, REPLAY_USAGE);
  if (f['--run-id'] === undefined) throw new ConfigError(`--run-id is required (the run whose trajectories to replay); usage: ${REPLAY_USAGE}`);
  const selection = buildSelection({
    runId: f['--run-id'],
    source: f['--source'] ?? 'kafka',
    fetch: f['--fetch'],
    fromMs: intFlag('from-ms', f['--from-ms'], 0),
    toMs: intFlag('to-ms', f['--to-ms'], 0),
    partition: intFlag('partition', f['--partition'], 0),
    fromOffset: intFlag('from-offset', f['--from-offset'], 0),
    toOffset: intFlag('to-offset', f['--to-offset'], 0),
    minPolicyVersion: intFlag('min-version', f['--min-version'], 0),
    maxPolicyVersion: intFlag('max-version', f['--max-version'], 0),
    minReward: numberFlag('min-reward', f['--min-reward']),
    success: boolFlag('success', f['--success']),
    includeIncomplete: boolFlag('include-incomplete', f['--include-incomplete']),
    limit: f['--limit'] === undefined ? undefined : positiveInt('limit', f['--limit'], 1),
  });
  let file: Partial<ProcessingConfig> = {};
  if (f['--processing'] !== undefined) {
    try {
      file = JSON.parse(readFileSync(f['--processing'], 'utf8')) as Partial<ProcessingConfig>;
    } catch (error) {
      throw new ConfigError(
        `--processing ${f['--processing']}: ${(error as Error).message}; pass a JSON file like {"reward":{"terms":[{"kind":"env_return"}]},"estimator":{"name":"grpo"},"filters":[]}`,
      );
    }
    if (typeof file !== 'object' || file === null || Array.isArray(file))
      throw new ConfigError(`--processing ${f['--processing']} must hold a JSON object with reward, estimator, filters`);
  }
  const processing: Partial<ProcessingConfig> = {
    ...file,
    ...(f['--estimator'] === undefined ? {} : { estimator: { name: f['--estimator'] as ProcessingConfig['estimator']['name'] } }),
    ...(f['--filters'] === undefined
      ? {}
      : {
          filters: f['--filters']
            .split(',')
            .filter((n) => n !== '')
            .map((name) => ({ name: name as FilterName })),
        }),
  };
  const settings = buildReplayProcessing({
    processing,
    ...strip({
      minGroupSize: f['--min-group-size'] === undefined ? undefined : positiveInt('min-group-size', f['--min-group-size'], 2),
      completeGroups: boolFlag('complete-groups', f['--complete-groups']),
      batchGroups: f['--batch-groups'] === undefined ? undefined : positiveInt('batch-groups', f['--batch-groups'], 64),
      replayId: f['--replay-id'],
      intoRunId: f['--into-run'],
    }),
  });
  return { selection, processing: settings, dryRun: on.has('--dry-run'), json: on.has('--json') };
}

function strip<T extends Record<string, unknown>>(record: T): Partial<T> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export const replayCommand: Command = {
  summary: "replay stored trajectories of a run with today's rewards and advantages into <prefix>.samples (trained off-policy)",
  usage: REPLAY_USAGE,
  async run(args) {
    const parsed = parseReplayArgs(args);
    const config = loadConfig();
    await ensureUp(config);
    const backbone = await connectBackbone(config, { clientId: `trajflow-replay-${parsed.processing.replayId}` });
    try {
      let bar: ProgressBar | undefined;
      const report = await startReplay(backbone, parsed.selection, parsed.processing, {
        dryRun: parsed.dryRun,
        onPublished: (published, total) => (bar ??= progressBar({ label: `replay ${parsed.processing.replayId}`, total, unit: 'samples' })).set(published),
      });
      bar?.finish();
      console.log(parsed.json ? JSON.stringify(report) : formatReplayReport(report));
      return 0;
    } finally {
      await backbone.close();
    }
  },
};
