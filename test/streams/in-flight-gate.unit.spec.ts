import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InFlightGate } from '../../streams/in-flight-gate.js';

test('waits while the limit is reached and opens when the count drops', async () => {
  let inFlight = 2;
  const gate = new InFlightGate(2, () => inFlight);
  let opened = false;
  const waiting = gate.whenOpen({ tickMs: 10_000 }).then(() => (opened = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(opened, false);
  inFlight = 1;
  gate.changed();
  await waiting;
  assert.equal(opened, true);
});

test('runs the tick (heartbeat) while it waits, and stops waiting when cancelled', async () => {
  const gate = new InFlightGate(1, () => 1);
  let ticks = 0;
  let cancelled = false;
  await gate.whenOpen({
    tickMs: 1,
    tick: async () => {
      ticks++;
      if (ticks === 3) cancelled = true;
    },
    cancelled: () => cancelled,
  });
  assert.equal(ticks, 3);
});

test('rejects a limit that is not a positive integer', () => {
  assert.throws(() => new InFlightGate(0, () => 0), /positive integer/);
});

test('a byte limit closes the gate while the count limit is still open, and reopens as bytes are acknowledged', async () => {
  let count = 1;
  let bytes = 900;
  const gate = new InFlightGate(
    100,
    () => count,
    1000,
    () => bytes,
  );
  assert.equal(gate.open, true);
  bytes = 1000;
  assert.equal(gate.open, false, 'at the byte limit');
  let opened = false;
  const waiting = gate.whenOpen({ tickMs: 10_000 }).then(() => (opened = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(opened, false);
  count = 0;
  bytes = 0;
  gate.changed();
  await waiting;
  assert.equal(opened, true);
});

test('rejects a byte limit below one', () => {
  assert.throws(
    () =>
      new InFlightGate(
        1,
        () => 0,
        0,
        () => 0,
      ),
    /maxInFlightBytes must be ≥ 1/,
  );
});
