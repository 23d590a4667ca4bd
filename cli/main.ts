// Entry point of the `trajflow` command: one table of subcommands, each in its own module,
// loaded lazily so `trajflow status` does not pay for kafkajs or tfjs.
import { ConfigError } from '../core/errors.js';

export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: string[]): Promise<number>;
}

const commands: Record<string, () => Promise<Command>> = {
  up: async () => (await import('../infra/commands.js')).upCommand,
  down: async () => (await import('../infra/commands.js')).downCommand,
  status: async () => (await import('../infra/commands.js')).statusCommand,
  processors: async () => (await import('../processors/pipeline/command.js')).processorsCommand,
  bench: async () => (await import('../bench/command.js')).benchCommand,
  detectors: async () => (await import('../analytics/detectors/command.js')).detectorsCommand,
  actors: async () => (await import('../envs/actors/command.js')).actorsCommand,
  sink: async () => (await import('../analytics/sink/command.js')).sinkCommand,
  replay: async () => (await import('../learner/replay/command.js')).replayCommand,
  eval: async () => (await import('../learner/eval/command.js')).evalCommand,
  train: async () => (await import('./train/command.js')).trainCommand,
  learner: async () => (await import('../learner/command.js')).learnerCommand,
  dashboard: async () => (await import('../dashboards/command.js')).dashboardCommandEntry,
};

async function help(): Promise<string> {
  const lines = ['usage: trajflow <command> [options]', '', 'commands:'];
  for (const [name, load] of Object.entries(commands)) {
    const command = await load();
    lines.push(`  ${name.padEnd(11)} ${command.summary}`);
  }
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
  try {
    return await command.run(args);
  } catch (error) {
    console.error(`trajflow ${name}: ${error instanceof Error ? error.message : String(error)}`);
    if (process.env.TRAJFLOW_DEBUG) console.error(error);
    // 2: the caller's usage or configuration (the message says what to change); 1: the run failed.
    return error instanceof ConfigError ? 2 : 1;
  }
}
