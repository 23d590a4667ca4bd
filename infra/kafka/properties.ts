// Renders the broker's server.properties. Pure functions, unit tested (the logging config: logging.ts).

/** A KRaft controller: its node id and controller port (all on loopback). */
export interface Voter {
  readonly nodeId: number;
  readonly controllerPort: number;
}

export interface BrokerLayout {
  /** This node's id; 1 for the single broker. */
  readonly nodeId?: number;
  /** The controller quorum (every node of the cluster); only this node when absent. */
  readonly voters?: readonly Voter[];
  readonly port: number;
  readonly controllerPort: number;
  /** Where the broker keeps its log segments and KRaft metadata. */
  readonly dataDir: string;
  /** The file log4j writes the broker's log to. */
  readonly logFile: string;
}

/** The node id of the single broker; also the controller quorum's only voter. */
export const NODE_ID = 1;

export interface Replication {
  /** Replicas per partition: topics, consumer offsets, transaction state. */
  readonly replicationFactor: number;
  /** Replicas an acks=all write must reach: with 3 and 2, an acknowledged write survives the loss of a broker. */
  readonly minInsyncReplicas: number;
}

/** Replication on a cluster of `nodes` brokers: 3 replicas and min.insync.replicas=2 from 3 brokers on; fewer brokers, one replica each. */
export function clusterReplication(nodes: number): Replication {
  const replicationFactor = Math.min(3, Math.max(1, nodes));
  return { replicationFactor, minInsyncReplicas: replicationFactor >= 3 ? 2 : 1 };
}

export function renderServerProperties(layout: BrokerLayout): Record<string, string> {
  const nodeId = layout.nodeId ?? NODE_ID;
  const voters = layout.voters ?? [{ nodeId, controllerPort: layout.controllerPort }];
  const { replicationFactor, minInsyncReplicas } = clusterReplication(voters.length);
  return {
    // Each process is both broker and KRaft controller (no ZooKeeper); a static quorum of every node.
    'process.roles': 'broker,controller',
    'node.id': String(nodeId),
    'controller.quorum.voters': voters.map((v) => `${v.nodeId}@127.0.0.1:${v.controllerPort}`).join(','),
    listeners: `PLAINTEXT://127.0.0.1:${layout.port},CONTROLLER://127.0.0.1:${layout.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${layout.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': layout.dataDir,
    // A single broker cannot replicate: internal topics must ask for one replica; three brokers keep three.
    'offsets.topic.replication.factor': String(replicationFactor),
    'transaction.state.log.replication.factor': String(replicationFactor),
    'transaction.state.log.min.isr': String(minInsyncReplicas),
    // Fewer internal partitions than the defaults (50): the first consumer group joins faster on 2 cores.
    'offsets.topic.num.partitions': '8',
    'transaction.state.log.num.partitions': '4',
    'group.initial.rebalance.delay.ms': '0',
    // Topics come from infra/topics.ts only, so a typo in a topic name fails instead of creating a topic.
    'auto.create.topics.enable': 'false',
    'num.partitions': '1',
    'default.replication.factor': String(replicationFactor),
    'min.insync.replicas': String(minInsyncReplicas),
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
