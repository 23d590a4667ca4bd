// Renders the broker's server.properties. Pure functions, unit tested (the logging config: logging.ts).

export interface BrokerLayout {
  readonly port: number;
  readonly controllerPort: number;
  /** Where the broker keeps its log segments and KRaft metadata. */
  readonly dataDir: string;
  /** The file log4j writes the broker's log to. */
  readonly logFile: string;
}

/** The node id of the single broker; also the controller quorum's only voter. */
export const NODE_ID = 1;

export function renderServerProperties(layout: BrokerLayout): Record<string, string> {
  return {
    // One process is both broker and KRaft controller (no ZooKeeper).
    'process.roles': 'broker,controller',
    'node.id': String(NODE_ID),
    'controller.quorum.voters': `${NODE_ID}@127.0.0.1:${layout.controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${layout.port},CONTROLLER://127.0.0.1:${layout.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${layout.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': layout.dataDir,
    // A single broker cannot replicate: internal topics must ask for one replica.
    'offsets.topic.replication.factor': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    // Fewer internal partitions than the defaults (50): the first consumer group joins faster on 2 cores.
    'offsets.topic.num.partitions': '8',
    'transaction.state.log.num.partitions': '4',
    'group.initial.rebalance.delay.ms': '0',
    // Topics come from infra/topics.ts only, so a typo in a topic name fails instead of creating a topic.
    'auto.create.topics.enable': 'false',
    'num.partitions': '1',
    'default.replication.factor': '1',
    'min.insync.replicas': '1',
    // Trajectory events carry all their steps; allow records up to 16 MiB rather than the 1 MiB default.
    'message.max.bytes': '16777216',
    'replica.fetch.max.bytes': '16777216',
    'num.network.threads': '2',
    'num.io.threads': '4',
    'num.recovery.threads.per.data.dir': '1',
    'log.retention.check.interval.ms': '300000',
  };
}

/** The properties as file text, keys sorted so rewrites of an unchanged config give the same file. */
export function formatProperties(properties: Record<string, string>, header: string): string {
  const lines = [`# ${header}`];
  for (const key of Object.keys(properties).sort()) lines.push(`${key}=${properties[key]}`);
  return `${lines.join('\n')}\n`;
}
