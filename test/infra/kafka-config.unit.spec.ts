import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_KAFKA_VERSION, loadConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { kafkaMajor, renderFetchPom, slf4jBinding } from '../../infra/kafka/fetch.js';
import { brokerLogging, renderLog4j, renderLog4j2 } from '../../infra/kafka/logging.js';
import { formatProperties, renderServerProperties } from '../../infra/kafka/properties.js';
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
