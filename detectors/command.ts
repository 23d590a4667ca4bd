// `trajflow detectors`: the collapse detectors as the consumer group `<prefix>.detectors` (learner steps,
// rollout statistics, trajectories → alerts) until SIGINT/SIGTERM; or, with --history, once over a run
// stored in ClickHouse.
import { parseArgs } from 'node:util';
import type { Command } from '../infra/cli/command.js';
import { loadConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { ensureUp } from '../infra/up.js';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import type { CollapseAlertEvent } from '../schemas/index.js';
import { connectBackbone, shutdownOnSignals } from '../streams/index.js';
import { numberFlag } from '../infra/cli/flags.js';
import { buildDetectorsConfig, DEFAULT_ATTRIBUTION_HOLD_MS, readsTrajectories, WITHOUT_TRAJECTORIES } from './config.js';
import { historicalAlerts } from './history.js';
import { startDetectors } from './start-detectors.js';

const usage = 'trajflow detectors [--run-id R] [--consumer-group <prefix>.detectors] [--no-trajectories] [--hold-ms 30000] ' + '[--grad-k 7] [--history --run-id R]';

const line = (a: CollapseAlertEvent): string =>
  `${a.severity.toUpperCase().padEnd(8)} ${a.kind} run ${a.runId} step ${a.learnerStep} (v${a.policyVersion}): ${a.message} [${a.alertId}]`;

export const detectorsCommand: Command = {
  summary: 'watch learner steps and rollout statistics for collapse (entropy, reward-variance cliff, grad-norm spikes, template collapse) and publish alerts',
  usage,
  async run(args) {
    const { values } = parseArgs({
      args,
      options: {
        'run-id': { type: 'string' },
        'consumer-group': { type: 'string' },
        'no-trajectories': { type: 'boolean', default: false },
        'hold-ms': { type: 'string' },
        'grad-k': { type: 'string' },
        history: { type: 'boolean', default: false },
      },
    });
    const runId = values['run-id'];
    if (runId !== undefined && runId.trim() === '') throw new ConfigError(`--run-id needs a run id; usage: ${usage}`);
    const gradK = numberFlag('grad-k', values['grad-k'], { positive: true });
    const holdMs = values['hold-ms'] === undefined ? DEFAULT_ATTRIBUTION_HOLD_MS : Number(values['hold-ms']);
    if (!Number.isInteger(holdMs) || holdMs < 0) throw new ConfigError(`--hold-ms needs an integer ≥ 0 (milliseconds; 0 never waits), got '${values['hold-ms']}'`);
    const detectors = buildDetectorsConfig({
      attributionHoldMs: holdMs,
      ...(gradK === undefined ? {} : { gradNormSpike: { k: gradK } }),
      ...(values['no-trajectories'] ? WITHOUT_TRAJECTORIES : {}),
    });
    const config = loadConfig();
    await ensureUp(config);

    if (values.history) {
      if (runId === undefined) throw new ConfigError(`--history reads one run from ClickHouse: give --run-id; usage: ${usage}`);
      const alerts = await historicalAlerts(clickHouseClient(config), runId, detectors);
      for (const alert of alerts) console.log(line(alert));
      console.log(`detectors: ${alerts.length} alert(s) over the learner steps and rollout batches of run ${runId} stored in ClickHouse (trajectory detectors not included)`);
      return 0;
    }

    const backbone = await connectBackbone(config, { clientId: 'trajflow-detectors' });
    const handle = await startDetectors(backbone, detectors, {
      ...(runId === undefined ? {} : { runId }),
      ...(values['consumer-group'] ? { consumerGroupId: values['consumer-group'] } : {}),
      onAlert: (alert) => console.log(line(alert)),
    });
    console.log(
      `detectors: consumer group '${handle.groupId}'${runId === undefined ? '' : `, run ${runId} only`}, ` +
        `${readsTrajectories(detectors) ? 'with' : 'without'} the trajectories topic; state rebuilt from ${handle.stats.rebuilt} event(s); alerts → ${config.topicPrefix}.alerts; Ctrl-C to stop`,
    );
    shutdownOnSignals([handle, backbone]);
    await handle.done;
    return 0;
  },
};
