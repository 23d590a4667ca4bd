// Unit: the API's Kafka admin clients over fake admins: one made on first use and reused, a fresh one after
// a failure, concurrent health checks sharing one probe, and the lag report under its deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kafkaProbe, lagReporter } from '../../api/kafka-admins.js';

function fakeAdmin(behaviour: { fail?: boolean; brokers?: number; hang?: boolean } = {}) {
  const calls: string[] = [];
  const admin = {
    calls,
    connect: async () => {
      calls.push('connect');
      if (behaviour.hang) await new Promise(() => undefined);
      if (behaviour.fail) throw new Error('no broker');
    },
    disconnect: async () => void calls.push('disconnect'),
    describeCluster: async () => {
      calls.push('describe');
      return { brokers: Array.from({ length: behaviour.brokers ?? 1 }, (_, i) => ({ nodeId: i, host: 'h', port: 9092 })), controller: 0, clusterId: 'c' };
    },
    listGroups: async () => ({ groups: [] }),
    describeGroups: async () => ({ groups: [] }),
    fetchOffsets: async () => [],
    fetchTopicOffsets: async () => [],
  };
  return admin;
}

test('the probe reuses its client while Kafka answers, and concurrent checks share one probe', async () => {
  const made: Array<ReturnType<typeof fakeAdmin>> = [];
  const probe = kafkaProbe(() => {
    made.push(fakeAdmin());
    return made.at(-1)!;
  }, 1000);
  const [a, b] = await Promise.all([probe.answers(), probe.answers()]);
  assert.deepEqual([a, b], [true, true]);
  assert.equal(await probe.answers(), true);
  assert.equal(made.length, 1);
  assert.deepEqual(made[0]!.calls, ['connect', 'describe', 'connect', 'describe']);
  await probe.close();
  assert.equal(made[0]!.calls.at(-1), 'disconnect');
});

test('a failed probe drops its client; the next one starts from a fresh client', async () => {
  const made: Array<ReturnType<typeof fakeAdmin>> = [];
  let fail = true;
  const probe = kafkaProbe(() => {
    made.push(fakeAdmin({ fail }));
    return made.at(-1)!;
  }, 1000);
  await assert.rejects(probe.answers(), /no broker/);
  assert.deepEqual(made[0]!.calls, ['connect', 'disconnect']);
  fail = false;
  assert.equal(await probe.answers(), true);
  assert.equal(made.length, 2);
});

test('a cluster without brokers does not answer', async () => {
  assert.equal(await kafkaProbe(() => fakeAdmin({ brokers: 0 }), 1000).answers(), false);
});

test('the lag report runs under its deadline, and a late one drops the client', async () => {
  const made: Array<ReturnType<typeof fakeAdmin>> = [];
  let hang = true;
  const lag = lagReporter(
    () => {
      made.push(fakeAdmin({ hang }));
      return made.at(-1)!;
    },
    'tf',
    20,
  );
  await assert.rejects(lag.report({}));
  assert.deepEqual(made[0]!.calls, ['connect', 'disconnect']);
  hang = false;
  const report = await lag.report({ group: 'tf.processors' });
  assert.equal(made.length, 2);
  assert.ok(report);
  await lag.close();
  assert.equal(made[1]!.calls.at(-1), 'disconnect');
});
