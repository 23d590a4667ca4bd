// Entry point of the `trajflow` command: one table of subcommands, each in its own module,
// loaded lazily so `trajflow status` does not pay for kafkajs or tfjs.
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import type { Command } from '../infra/cli/command.js';
import { blameConfigFile, withConfigFile, type ConfigFileArgs } from '../infra/cli/config-file.js';

const commands: Record<string, () => Promise<Command>> = {
  up: async () => (await import('../infra/service-commands.js')).upCommand,
  down: async () => (await import('../infra/service-commands.js')).downCommand,
  status: async () => (await import('../infra/service-commands.js')).statusCommand,
  processors: async () => (await import('../processors/pipeline/command.js')).processorsCommand,
  bench: async () => (await import('../bench/command.js')).benchCommand,
  detectors: async () => (await import('../detectors/command.js')).detectorsCommand,
  actors: async () => (await import('../rollout/command.js')).actorsCommand,
  sink: async () => (await import('../storage/sink/command.js')).sinkCommand,
  replay: async () => (await import('../learner/replay/command.js')).replayCommand,
  eval: async () => (await import('../learner/eval/command.js')).evalCommand,
  evaluator: async () => (await import('../learner/eval/evaluator-command.js')).evaluatorCommand,
  train: async () => (await import('../cli/train/command.js')).trainCommand,
  learner: async () => (await import('../learner/command.js')).learnerCommand,
  dashboard: async () => (await import('../api/command.js')).dashboardCommandEntry,
  gateway: async () => (await import('../gateway/command.js')).gatewayCommand,
};

async function help(): Promise<string> {
  const lines = ['usage: trajflow <command> [options] [--config trajflow.json]', '', 'commands:'];
  for (const [name, load] of Object.entries(commands)) {
    const command = await load();
    lines.push(`  ${name.padEnd(11)} ${command.summary}`);
  }
  lines.push(
    '',
    'Every command takes --config FILE (or TRAJFLOW_CONFIG=FILE): a JSON object of its settings by flag name,',
    'or one object per command ({"train": {"env": "Sokoban"}, "learner": {"lr": 0.001}}); typed flags win.',
    'Services: TRAJFLOW_KAFKA_BROKERS, TRAJFLOW_CLICKHOUSE_URL, TRAJFLOW_HOME, TRAJFLOW_TOPIC_PREFIX (see docs/reference/configuration.md).',
    'Exit codes: 0 done, 1 the work failed, 2 bad usage or configuration (the message says what to change).',
  );
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    console.log(await help());
    return name === undefined ? 1 : 0;
  }
  const load = commands[name];
  if (!load) {
    console.error(`trajflow: unknown command '${name}'\n\n${await help()}`);
    return 2;
  }
  const command = await load();
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: ${command.usage}\n\n${command.summary}`);
    return 0;
  }
  let config: ConfigFileArgs = { args, fromFile: [] };
  const inherited = process.env.TRAJFLOW_CONFIG;
  try {
    config = withConfigFile(name, args, Object.keys(commands));
    // A sectioned file also configures the processes this one starts (`train` runs each part as a child).
    if (config.sectioned && config.path !== undefined) process.env.TRAJFLOW_CONFIG = resolve(config.path);
    return await command.run(config.args);
  } catch (error) {
    console.error(`trajflow ${name}: ${blameConfigFile(error instanceof Error ? error.message : String(error), config)}`);
    if (process.env.TRAJFLOW_DEBUG) console.error(error);
    // 2: the caller's usage or configuration (the message says what to change); 1: the run failed.
    return isUsageError(error) ? 2 : 1;
  } finally {
    if (inherited === undefined) delete process.env.TRAJFLOW_CONFIG;
    else process.env.TRAJFLOW_CONFIG = inherited;
  }
}

/** Bad configuration, or a flag node's parseArgs refused (unknown option, missing value). */
function isUsageError(error: unknown): boolean {
  if (error instanceof ConfigError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}
