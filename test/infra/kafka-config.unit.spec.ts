import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { clusterSizeFile, DEFAULT_KAFKA_VERSION, loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { kafkaMajor, renderFetchPom, slf4jBinding } from '../../infra/kafka/fetch.js';
import { brokerLogging, renderLog4j, renderLog4j2 } from '../../infra/kafka/logging.js';
import { kafkaNodes } from '../../infra/kafka/nodes.js';
import { clusterReplication, formatProperties, renderServerProperties } from '../../infra/kafka/properties.js';
import { newClusterId } from '../../infra/kafka/storage.js';

const layout = { port: 41092, controllerPort: 41093, dataDir: '/tmp/x/kafka/data', logFile: '/tmp/x/logs/kafka.log' };

test('server.properties runs one KRaft node as broker and controller on loopback', () => {
  const p = renderServerProperties(layout);
  assert.equal(p['process.roles'], 'broker,controller');
  assert.equal(p['node.id'], '1');
  assert.equal(p['controller.quorum.voters'], '1@127.0.0.1:41093');
  assert.equal(p['listeners'], 'PLAINTEXT://127.0.0.1:41092,CONTROLLER://127.0.0.1:41093');
  assert.equal(p['advertised.listeners'], 'PLAINTEXT://127.0.0.1:41092');
  assert.equal(p['controller.listener.names'], 'CONTROLLER');
  assert.equal(p['log.dirs'], '/tmp/x/kafka/data');
});

test('server.properties fits a single broker: internal topics with one replica, no auto-created topics', () => {
  const p = renderServerProperties(layout);
  assert.equal(p['offsets.topic.replication.factor'], '1');
  assert.equal(p['transaction.state.log.replication.factor'], '1');
  assert.equal(p['transaction.state.log.min.isr'], '1');
  assert.equal(p['group.initial.rebalance.delay.ms'], '0');
  assert.equal(p['auto.create.topics.enable'], 'false');
  assert.equal(p['num.partitions'], '1');
});

test('formatProperties writes sorted key=value lines after a header, so unchanged configs give the same file', () => {
  const text = formatProperties({ b: '2', a: '1' }, 'hello');
  assert.equal(text, '# hello\na=1\nb=2\n');
  assert.equal(formatProperties(renderServerProperties(layout), 'h'), formatProperties(renderServerProperties(layout), 'h'));
});

test('log4j config writes the broker log to the given file', () => {
  const text = renderLog4j('/tmp/x/logs/kafka.log');
  assert.match(text, /^log4j\.rootLogger=INFO, file$/m);
  assert.match(text, /^log4j\.appender\.file\.File=\/tmp\/x\/logs\/kafka\.log$/m);
});

test('log4j2 config (Kafka 4.x) writes the broker log to one rolling file and quiets the request logger', () => {
  const text = renderLog4j2('/tmp/x/logs/kafka.log');
  assert.match(text, /^appender\.file\.type=RollingFile$/m);
  assert.match(text, /^appender\.file\.fileName=\/tmp\/x\/logs\/kafka\.log$/m);
  assert.match(text, /^appender\.file\.filePattern=\/tmp\/x\/logs\/kafka\.log\.%i$/m);
  assert.match(text, /^rootLogger\.level=INFO$/m);
  assert.match(text, /^rootLogger\.appenderRef\.file\.ref=file$/m);
  const quiet = /^logger\.(\w+)\.name=kafka\.request\.logger$/m.exec(text)?.[1];
  assert.ok(quiet, 'the request logger has a logger entry');
  assert.match(text, new RegExp(`^logger\\.${quiet}\\.level=WARN$`, 'm'));
  assert.doesNotMatch(text, /log4j\.appender/, 'no log4j 1.x keys in a log4j2 file');
});

test('the logging config follows the major version: log4j 1.x for 3.x, log4j2 for 4.x, each with its own JVM option', () => {
  const three = brokerLogging('3.9.2', '/l/kafka.log');
  assert.equal(three.fileName, 'log4j.properties');
  assert.equal(three.jvmOption('/h/kafka/log4j.properties'), '-Dlog4j.configuration=file:/h/kafka/log4j.properties');
  assert.equal(three.text, renderLog4j('/l/kafka.log'));
  const four = brokerLogging('4.4.0', '/l/kafka.log');
  assert.equal(four.fileName, 'log4j2.properties');
  assert.equal(four.jvmOption('/h/kafka/log4j2.properties'), '-Dlog4j2.configurationFile=/h/kafka/log4j2.properties');
  assert.equal(four.text, renderLog4j2('/l/kafka.log'));
});

test('the fetch pom asks for the pinned broker and the slf4j binding of its major version', () => {
  const pom3 = renderFetchPom('3.9.2');
  assert.match(pom3, /<artifactId>kafka_2\.13<\/artifactId><version>3\.9\.2<\/version>/);
  assert.match(pom3, /<artifactId>slf4j-reload4j<\/artifactId>/);
  const pom4 = renderFetchPom('4.4.0');
  assert.match(pom4, /<artifactId>kafka_2\.13<\/artifactId><version>4\.4\.0<\/version>/);
  assert.match(pom4, /<groupId>org\.apache\.logging\.log4j<\/groupId><artifactId>log4j-slf4j-impl<\/artifactId>/);
  assert.doesNotMatch(pom4, /reload4j/);
});

test('Kafka 4.x is the default; 3.x still starts; other majors are refused naming the setting', () => {
  assert.equal(kafkaMajor(DEFAULT_KAFKA_VERSION), 4);
  assert.equal(loadConfig({}).kafka.version, DEFAULT_KAFKA_VERSION);
  assert.equal(loadConfig({ TRAJFLOW_KAFKA_VERSION: '3.9.2' }).kafka.version, '3.9.2');
  assert.equal(slf4jBinding('3.9.2').artifactId, 'slf4j-reload4j');
  assert.equal(slf4jBinding('4.1.0').artifactId, 'log4j-slf4j-impl');
  assert.throws(
    () => slf4jBinding('2.8.2'),
    (e: unknown) => e instanceof ConfigError && /TRAJFLOW_KAFKA_VERSION=2\.8\.2/.test(e.message),
  );
  assert.throws(() => renderFetchPom('5.0.0'), ConfigError);
  assert.throws(() => loadConfig({ TRAJFLOW_KAFKA_VERSION: 'latest' }), /TRAJFLOW_KAFKA_VERSION='latest'/);
});

test('cluster ids look like Kafka Uuids and never start with a dash', () => {
  for (let i = 0; i < 200; i += 1) {
    const id = newClusterId();
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  }
});

test('a 3-node cluster: every node a voter, its own id and ports, 3 replicas and min.insync.replicas=2 for topics and internal topics', () => {
  const voters = [
    { nodeId: 1, controllerPort: 41093 },
    { nodeId: 2, controllerPort: 41095 },
    { nodeId: 3, controllerPort: 41097 },
  ];
  const p = renderServerProperties({ ...layout, nodeId: 2, voters, port: 41094, controllerPort: 41095 });
  assert.equal(p['node.id'], '2');
  assert.equal(p['controller.quorum.voters'], '1@127.0.0.1:41093,2@127.0.0.1:41095,3@127.0.0.1:41097');
  assert.equal(p['listeners'], 'PLAINTEXT://127.0.0.1:41094,CONTROLLER://127.0.0.1:41095');
  for (const key of ['default.replication.factor', 'offsets.topic.replication.factor', 'transaction.state.log.replication.factor']) assert.equal(p[key], '3', key);
  for (const key of ['min.insync.replicas', 'transaction.state.log.min.isr']) assert.equal(p[key], '2', key);
  assert.deepEqual(clusterReplication(1), { replicationFactor: 1, minInsyncReplicas: 1 });
  assert.deepEqual(clusterReplication(2), { replicationFactor: 2, minInsyncReplicas: 1 });
  assert.deepEqual(clusterReplication(5), { replicationFactor: 3, minInsyncReplicas: 2 });
});

test('the cluster size comes from TRAJFLOW_KAFKA_NODES or the home, node i on port + 2i; bad sizes and colliding ports are refused', () => {
  const home = mkdtempSync(join(tmpdir(), 'trajflow-nodes-'));
  try {
    const one = loadConfig({ TRAJFLOW_HOME: home });
    assert.equal(one.kafka.nodes, 1);
    assert.deepEqual(one.kafka.brokers, ['127.0.0.1:19092']);
    const three = loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_NODES: '3', TRAJFLOW_KAFKA_PORT: '29092', TRAJFLOW_KAFKA_CONTROLLER_PORT: '29093' });
    assert.equal(three.kafka.nodes, 3);
    assert.deepEqual(three.kafka.brokers, ['127.0.0.1:29092', '127.0.0.1:29094', '127.0.0.1:29096']);
    assert.deepEqual(
      kafkaNodes(three).map((n) => [n.nodeId, n.port, n.controllerPort, n.paths.dataDir]),
      [1, 2, 3].map((id) => [id, 29090 + 2 * id, 29091 + 2 * id, join(home, 'kafka', `node-${id}`, 'data')]),
    );
    assert.equal(kafkaNodes(one)[0]!.paths.dataDir, join(home, 'kafka', 'data'), 'one broker keeps the folder it always had');
    // `trajflow up --brokers 3` leaves the size in the home: later commands find the cluster without the flag.
    mkdirSync(join(home, 'kafka'), { recursive: true });
    writeFileSync(clusterSizeFile(home), '3\n');
    assert.equal(loadConfig({ TRAJFLOW_HOME: home }).kafka.nodes, 3);
    assert.equal(loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_BROKERS: 'b1:9092' }).kafka.nodes, 1, 'an external cluster: nothing to run');
    assert.throws(() => loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_NODES: '9' }), /TRAJFLOW_KAFKA_NODES says '9'/);
    assert.throws(
      () => loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_NODES: '2', TRAJFLOW_KAFKA_PORT: '29092', TRAJFLOW_KAFKA_CONTROLLER_PORT: '29094' }),
      /TRAJFLOW_KAFKA_PORT \+ 2i/,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
