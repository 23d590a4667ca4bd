// Unit tier: the [fetchers-after-stop] patch of kafkajs' consumer fetch manager (patches/kafkajs+2.2.4.patch,
// docs/design/kafka-client.md). When a broker is lost or comes back, the consumer's node ids change and the fetch
// manager replaces its fetchers. A stop() that came during that replacement (a consumer closing — the episode
// marks' replay does at its end) was followed by new fetchers nobody stopped; the runner, stopped, answers their
// fetches at once with nothing, so they looped on resolved promises forever — 100 % of a core, no timer, no I/O,
// no signal handler ever ran again. Seen in the 3-broker loss test: a `trajflow processors` process spinning
// silently, left alive after the test (its SIGTERM never handled). Fails on the shipped fetch manager.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const createFetchManager = require('kafkajs/src/consumer/fetchManager.js') as (options: Record<string, unknown>) => {
  start(): Promise<void>;
  stop(): Promise<void>;
};

/** A fetch loop this many times with the runner stopped is the spin (the shipped code never ends it). */
const SPIN = 10_000;

test('a stop during the fetchers’ replacement after a node-id change leaves no fetcher looping', async () => {
  let nodeIds = [1, 2];
  let running = true;
  let callsWhileStopped = 0;
  const logger = { namespace: () => logger, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const manager = createFetchManager({
    logger,
    getNodeIds: () => nodeIds,
    handler: async () => undefined,
    // The runner's fetch: a broker round trip while running (node 2's slower), nothing at once when stopped.
    fetch: async (nodeId: number) => {
      if (!running) {
        if (++callsWhileStopped > SPIN) throw new Error(`fetched ${SPIN} times with the runner stopped: the fetchers spin`);
        return [];
      }
      await new Promise((resolve) => setTimeout(resolve, nodeId === 1 ? 1 : 30));
      return [];
    },
  });
  const started = manager.start();
  await new Promise((resolve) => setTimeout(resolve, 10));
  // Broker 2 is lost: node 1's next fetch throws the rebalance error, and the manager, waiting for node 2's
  // fetcher to end, is about to create new fetchers when the runner stops.
  nodeIds = [1];
  await new Promise((resolve) => setTimeout(resolve, 8));
  running = false;
  await manager.stop();
  await started;
  assert.ok(callsWhileStopped <= 2, `fetches after the stop: ${callsWhileStopped}`);
});
