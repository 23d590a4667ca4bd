import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderFetchPom } from '../../infra/kafka/fetch.js';
import { formatProperties, renderLog4j, renderServerProperties } from '../../infra/kafka/properties.js';
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

test('the fetch pom asks for the pinned broker and an slf4j binding', () => {
  const pom = renderFetchPom('3.9.2');
  assert.match(pom, /<artifactId>kafka_2\.13<\/artifactId><version>3\.9\.2<\/version>/);
  assert.match(pom, /<artifactId>slf4j-reload4j<\/artifactId>/);
});

test('cluster ids look like Kafka Uuids and never start with a dash', () => {
  for (let i = 0; i < 200; i += 1) {
    const id = newClusterId();
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
  }
});
