// Integration (a broker of its own with a SASL_PLAINTEXT listener, test/streams/helpers/sasl-broker.ts): the right
// SCRAM credentials publish and consume a step through trajflow's own client; a wrong password stops the client
// and `trajflow status` at start, naming the setting (exit code 2), and no output holds the password.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { inspect } from 'node:util';
import { topicName, loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { sampleEvents } from '../../bench/load/events.js';
import { connectBackbone, createEventConsumer, createKafka, StepPublisher } from '../../streams/index.js';
import { collect, createTopic, uniqueName } from '../helpers/kafka.js';
import { saslConfig, startSaslBroker, type SaslBroker } from './helpers/sasl-broker.js';
import { trajflowStatus } from '../helpers/trajflow-status.js';

const ALICE_PASSWORD = `alice-${uniqueName('pw').slice(-6)}-scram`;
const CAROL_PASSWORD = `carol-${uniqueName('pw').slice(-6)}-plain`;
const WRONG_PASSWORD = `wrong-${uniqueName('pw').slice(-6)}-guess`;
let broker: SaslBroker;

before(async () => {
  broker = await startSaslBroker({ carol: CAROL_PASSWORD });
  await broker.addScramUser('alice', ALICE_PASSWORD);
});
after(async () => {
  await broker?.stop();
});

async function connects(mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', user: string, password: string): Promise<unknown> {
  return connectsAs(saslConfig(broker.brokers, mechanism, user, password));
}

/** The number of brokers the cluster describes, or the error connecting threw. */
async function connectsAs(config: TrajflowConfig): Promise<unknown> {
  const admin = createKafka(config, { retries: 0 }).admin();
  try {
    await admin.connect();
    return (await admin.describeCluster()).brokers.length;
  } catch (error) {
    return error;
  } finally {
    await admin.disconnect();
  }
}

test('SCRAM-SHA-512 with the right password: a step published through the backbone comes out of the consumer', async () => {
  const config = { ...saslConfig(broker.brokers, 'scram-sha-512', 'alice', ALICE_PASSWORD), topicPrefix: uniqueName('sasl') };
  const kafka = createKafka(config);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: ['schemas', 'deadletter'].map((name) => ({ topic: topicName(config, name), numPartitions: 1, replicationFactor: 1 })), waitForLeaders: true });
  await admin.disconnect();
  const backbone = await connectBackbone(config, { clientId: 'test-sasl' });
  try {
    const topic = await createTopic(backbone.kafka, 'sasl-steps');
    const step = { ...sampleEvents.step, eventId: uniqueName('sasl-step') };
    await new StepPublisher(backbone.producer, topic).publish(step);
    const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', { topic, groupId: uniqueName('sasl'), deadLetters: backbone.deadLetters });
    const [received] = await collect(consumer.events$, 1, 60_000);
    received!.ack();
    await consumer.close();
    assert.equal(received!.value.eventId, step.eventId);
    console.log(`Kafka ${broker.version}: a step went through SASL/SCRAM-SHA-512 as alice`);
  } finally {
    await backbone.close();
  }
});

test('SCRAM-SHA-256 and PLAIN log in with their users', async () => {
  assert.equal(await connects('scram-sha-256', 'alice', ALICE_PASSWORD), 1);
  assert.equal(await connects('plain', 'carol', CAROL_PASSWORD), 1);
});

test('a wrong SCRAM or PLAIN password is a ConfigError naming the setting, without the password (nor in kafkajs log lines)', async (t) => {
  const logged: string[] = [];
  for (const stream of ['log', 'error'] as const) t.mock.method(console, stream, (...args: unknown[]) => logged.push(args.map(String).join(' ')));
  for (const [mechanism, user] of [
    ['scram-sha-512', 'alice'],
    ['plain', 'carol'],
  ] as const) {
    const started = Date.now();
    const error = await connects(mechanism, user, WRONG_PASSWORD);
    assert.ok(error instanceof ConfigError, `${mechanism}: expected a ConfigError, got ${inspect(error)}`);
    assert.match(error.message, /TRAJFLOW_KAFKA_SASL_PASSWORD/);
    assert.match(error.message, new RegExp(`user '${user}'`));
    assert.ok(!error.message.includes(WRONG_PASSWORD));
    assert.ok(Date.now() - started < 15_000, 'a refused login is not retried');
  }
  assert.ok(
    logged.some((line) => /authentication failed/i.test(line)),
    `kafkajs logged the refusal: ${logged.join('\n')}`,
  );
  assert.ok(!logged.some((line) => line.includes(WRONG_PASSWORD)));
});

test('SASL_SSL: SCRAM over TLS trusting TRAJFLOW_KAFKA_TLS_CA_FILE logs in; without the CA the message names that setting', async () => {
  const env = {
    ...process.env,
    TRAJFLOW_KAFKA_BROKERS: broker.tlsBrokers,
    TRAJFLOW_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    TRAJFLOW_KAFKA_SASL_USERNAME: 'alice',
    TRAJFLOW_KAFKA_SASL_PASSWORD: ALICE_PASSWORD,
  };
  assert.equal(await connectsAs(loadConfig({ ...env, TRAJFLOW_KAFKA_TLS_CA_FILE: broker.caFile })), 1);
  const untrusted = await connectsAs(loadConfig({ ...env, TRAJFLOW_KAFKA_TLS: '1' }));
  assert.ok(untrusted instanceof ConfigError, inspect(untrusted));
  assert.match(untrusted.message, /TLS does not trust the broker's certificate \(SELF_SIGNED_CERT_IN_CHAIN\): set TRAJFLOW_KAFKA_TLS_CA_FILE/);
});

test('trajflow status: the right password answers (exit 0); a wrong one exits 2 naming the setting, never printing it', async () => {
  const shared = loadConfig();
  const env = {
    TRAJFLOW_KAFKA_BROKERS: broker.brokers,
    TRAJFLOW_CLICKHOUSE_URL: shared.clickhouse.url,
    TRAJFLOW_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    TRAJFLOW_KAFKA_SASL_USERNAME: 'alice',
  };
  const right = await trajflowStatus({ ...env, TRAJFLOW_KAFKA_SASL_PASSWORD: ALICE_PASSWORD });
  assert.equal(right.code, 0, right.output);
  assert.match(right.output, /kafka\s+up/);
  assert.ok(!right.output.includes(ALICE_PASSWORD));

  const wrong = await trajflowStatus({ ...env, TRAJFLOW_KAFKA_SASL_PASSWORD: WRONG_PASSWORD });
  assert.equal(wrong.code, 2, wrong.output);
  assert.match(wrong.output, /refused the SASL SCRAM-SHA-512 login of user 'alice'.*TRAJFLOW_KAFKA_SASL_PASSWORD\b/);
  assert.ok(!wrong.output.includes(WRONG_PASSWORD));

  // From a file, and from a config file's "kafka" section: the message names where the password came from.
  const passwordFile = join(broker.dir, 'kafka-password');
  writeFileSync(passwordFile, `${WRONG_PASSWORD}\n`);
  const fromFile = await trajflowStatus({ ...env, TRAJFLOW_KAFKA_SASL_PASSWORD_FILE: passwordFile });
  assert.equal(fromFile.code, 2, fromFile.output);
  assert.match(fromFile.output, /TRAJFLOW_KAFKA_SASL_PASSWORD_FILE/);
  assert.ok(!fromFile.output.includes(WRONG_PASSWORD));

  const configFile = join(broker.dir, 'trajflow.json');
  writeFileSync(configFile, JSON.stringify({ kafka: { brokers: broker.brokers, saslMechanism: 'scram-sha-512', saslUsername: 'alice', saslPasswordFile: 'kafka-password' } }));
  const { TRAJFLOW_KAFKA_BROKERS: _, TRAJFLOW_KAFKA_SASL_MECHANISM: __, TRAJFLOW_KAFKA_SASL_USERNAME: ___, ...services } = env;
  const fromConfig = await trajflowStatus({ ...services, TRAJFLOW_CONFIG: configFile });
  assert.equal(fromConfig.code, 2, fromConfig.output);
  assert.match(fromConfig.output, /TRAJFLOW_KAFKA_SASL_PASSWORD_FILE \(set by config file .*kafka\.saslPasswordFile\)/);
  assert.ok(!fromConfig.output.includes(WRONG_PASSWORD));
});
