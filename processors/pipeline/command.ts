// `trajflow processors`: runs the processors pipeline as one member of the processors consumer group.
// Start several to split the partitions of the steps topic (--instance only labels this one's log).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Command } from '../../infra/cli/command.js';
import { loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { ensureUp } from '../../infra/up.js';
import { connectBackbone, shutdownOnSignals } from '../../streams/index.js';
import { estimators, type EstimatorName } from '../advantages/registry.js';
import { filterNames, type FilterName } from '../filters/registry.js';
import { startProcessors, type ProcessorsHandle } from './processor.js';
import { DEFAULT_GROUP_IDLE_CLOSE_MS, type ProcessorsOptions } from './config.js';
import type { BatchStats } from '../stats/batch-stats.js';
import { superviseProcessors } from './supervise.js';
import { jsonObjectFlag, positiveInt } from '../../infra/cli/flags.js';

const usage =
  'trajflow processors [--estimator grpo|dr_grpo|rloo|starpo|reinforce_plus_plus|reinforce_plus_plus_baseline|gigpo] ' +
  '[--filter dynamic_sampling|starpo_s_variance|ragen2_snr_top_p]… [--group-size 8] [--min-group-size 2] ' +
  '[--idle-timeout-ms 120000] [--group-timeout-ms 300000] [--group-idle-close-ms 3000] [--batch-window-ms 20] [--max-batch-groups 64] [--iteration-idle-ms 10000] [--flush-ms 100] ' +
  '[--consumer-group <prefix>.processors] [--instance 0]';

const FLAGS = {
  estimator: { type: 'string', default: 'grpo' },
  'estimator-options': { type: 'string' },
  filter: { type: 'string', multiple: true, default: [] as string[] },
  'group-size': { type: 'string' },
  'min-group-size': { type: 'string' },
  'idle-timeout-ms': { type: 'string' },
  'group-timeout-ms': { type: 'string' },
  'group-idle-close-ms': { type: 'string' },
  'consumer-group': { type: 'string' },
  instance: { type: 'string', default: '0' },
  'batch-window-ms': { type: 'string' },
  'max-batch-groups': { type: 'string' },
  'iteration-idle-ms': { type: 'string' },
  'flush-ms': { type: 'string' },
} satisfies ParseArgsConfig['options'];

type FlagValues = ReturnType<typeof parseArgs<{ options: typeof FLAGS }>>['values'];

export const processorsCommand: Command = {
  summary: 'run the processors: steps → trajectories → groups → advantages → samples (exactly once)',
  usage,
  async run(args) {
    const { values } = parseArgs({ args, options: FLAGS });
    const estimator = values.estimator as EstimatorName;
    if (!(estimator in estimators)) throw new ConfigError(`--estimator '${values.estimator}' is unknown; use one of ${Object.keys(estimators).join(', ')}`);
    for (const name of values.filter ?? []) {
      if (!filterNames.includes(name as FilterName)) throw new ConfigError(`--filter '${name}' is unknown; use one of ${filterNames.join(', ')}`);
    }
    const estimatorOptions = jsonObjectFlag('estimator-options', values['estimator-options'], { example: '{"omega":3,"gamma":0.7}' });
    const config = loadConfig();
    await ensureUp(config);
    const backbone = await connectBackbone(config, { clientId: 'trajflow-processors' });
    let stopping = false;
    let current: ProcessorsHandle | undefined;
    const pipeline = {
      close: async () => {
        stopping = true;
        await current?.close();
        if (current) console.error(stoppedLine(current));
      },
    };
    shutdownOnSignals([pipeline, backbone]);
    let closedBy: () => string = () => '';
    const start = async () => {
      const onBatch = (stats: BatchStats) => console.log(batchLine(stats, closedBy()));
      const handle = await startProcessors(backbone, processorsOptions(values, estimator, estimatorOptions, onBatch));
      // Groups closed so far, by why: 'closed idle' and 'closed by timeout' are groups whose size was not announced or not reached.
      closedBy = () => {
        const c = handle.stats.groups.closedBy;
        return `; groups closed: ${c.full} full, ${c.idle} idle, ${c.timeout} by timeout, ${c.evicted} evicted`;
      };
      return handle;
    };
    console.log(
      `processors: consumer group '${values['consumer-group'] ?? `${config.topicPrefix}.processors`}', instance ${values.instance}, estimator ${estimator}; Ctrl-C to stop`,
    );
    // A failed transaction (e.g. the broker restarted) is recovered here, without a process restart.
    await superviseProcessors(start, { log: (line) => console.error(line), onStart: (handle) => (current = handle), stopping: () => stopping });
    return 0;
  },
};

/** The pipeline's options from the flags (checked on every start, as the pipeline restarts with them). */
function processorsOptions(values: FlagValues, estimator: EstimatorName, estimatorOptions: Record<string, unknown>, onBatch: (stats: BatchStats) => void): ProcessorsOptions {
  return {
    ...(values['consumer-group'] ? { consumerGroupId: values['consumer-group'] } : {}),
    processing: {
      reward: { terms: [{ kind: 'env_return' }] },
      estimator: values['estimator-options'] === undefined ? { name: estimator } : { name: estimator, options: estimatorOptions as never },
      filters: (values.filter ?? []).map((name) => ({ name: name as FilterName })),
    },
    groupSize: positiveInt('group-size', values['group-size'], 8),
    minGroupSize: positiveInt('min-group-size', values['min-group-size'], 2),
    idleTimeoutMs: positiveInt('idle-timeout-ms', values['idle-timeout-ms'], 120_000),
    groupTimeoutMs: positiveInt('group-timeout-ms', values['group-timeout-ms'], 300_000),
    groupIdleCloseMs: positiveInt('group-idle-close-ms', values['group-idle-close-ms'], DEFAULT_GROUP_IDLE_CLOSE_MS),
    batchWindowMs: positiveInt('batch-window-ms', values['batch-window-ms'], 20),
    maxBatchGroups: positiveInt('max-batch-groups', values['max-batch-groups'], 64),
    iterationIdleMs: positiveInt('iteration-idle-ms', values['iteration-idle-ms'], 10_000),
    flushIntervalMs: positiveInt('flush-ms', values['flush-ms'], 100),
    onBatch,
  };
}

/** The log line of one processed batch; `closedBy`: the groups closed so far, by why. */
function batchLine(stats: BatchStats, closedBy: string): string {
  return (
    `batch: ${stats.groups} groups, ${stats.trajectories} trajectories, reward ${stats.rewardMean.toFixed(3)} ± ${stats.rewardStd.toFixed(3)}, ` +
    `success ${(100 * stats.successRate).toFixed(1)}%, in-group std ${stats.meanInGroupRewardStd.toFixed(3)}, dropped ${stats.droppedGroups}${closedBy}`
  );
}

/** What the pipeline did since it (last) started: read by operators, and by `bench scale` (transactions per step). */
function stoppedLine(handle: Pick<ProcessorsHandle, 'consumer' | 'emitter'>): string {
  const e = handle.emitter.stats;
  return `processors: stopped after ${handle.consumer.stats.delivered} steps read, ${e.transactions} transactions, ${e.samples} samples, ${e.trajectories} trajectories, ${e.deadLetters} dead letters, ${e.fenced} fenced`;
}
