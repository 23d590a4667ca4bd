// Unit: `bench sink`'s figures (bench/sink-figures.ts) — the sides' order alternating by round, a round's figures
// from its three sides, ClickHouse's CPU per row, and the medians over the rounds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clickHouseMicrosPerRow, roundFigures, sideOrder, sinkSummary } from '../../bench/sink-figures.js';
import { INSERTS_IN_FLIGHT, WARM_UP_SHARE } from '../../bench/sink-rounds.js';
import type { SideResult } from '../../bench/sink-side.js';

const side = (steady: number, extra: Partial<SideResult> = {}): SideResult => ({
  steady,
  whole: steady / 2,
  cpuMicrosPerRow: 10,
  eventLoopUtilization: 0.5,
  joinMs: 0,
  rowsPerInsert: 0,
  ...extra,
});

test('the sides alternate which runs first, the reader always in the middle', () => {
  assert.deepEqual(sideOrder(0), ['raw', 'read', 'sink']);
  assert.deepEqual(sideOrder(1), ['sink', 'read', 'raw']);
  assert.deepEqual(sideOrder(2), ['raw', 'read', 'sink']);
});

test("ClickHouse's CPU per row: the ms between the readings over the rows, null when either could not be read", () => {
  assert.equal(clickHouseMicrosPerRow(1000, 3000, 100_000), 20);
  assert.equal(clickHouseMicrosPerRow(null, 3000, 100_000), null);
  assert.equal(clickHouseMicrosPerRow(1000, null, 100_000), null);
});

test("a round's figures: the steady and whole rates, the ratio, the sink's join and inserts, each side's CPU", () => {
  const round = roundFigures(
    { raw: side(100, { eventLoopUtilization: 0.9, cpuMicrosPerRow: 20 }), read: side(400, { cpuMicrosPerRow: 4 }), sink: side(80, { joinMs: 3000, rowsPerInsert: 5000 }) },
    { raw: 12, sink: null },
  );
  assert.deepEqual(round, {
    rawRowsPerSec: 100,
    sinkRowsPerSec: 80,
    rawWholeRowsPerSec: 50,
    sinkWholeRowsPerSec: 40,
    readEventsPerSec: 200,
    ratio: 0.8,
    joinMs: 3000,
    sinkRowsPerInsert: 5000,
    rawEventLoopUtilization: 0.9,
    sinkEventLoopUtilization: 0.5,
    rawCpuMicrosPerRow: 20,
    sinkCpuMicrosPerRow: 10,
    readCpuMicrosPerEvent: 4,
    clickHouseMicrosPerRowRaw: 12,
    clickHouseMicrosPerRowSink: null,
  });
});

test('the summary: the settings, then the medians of the rounds (null when a round could not read ClickHouse)', () => {
  const rounds = [1, 3, 2].map((k) => roundFigures({ raw: side(100 * k), read: side(300 * k), sink: side(80 * k) }, { raw: k, sink: k === 3 ? null : k }));
  const summary = sinkSummary({ events: 1000, format: 'RowBinary', batchRows: 500, transcodeWorker: false }, rounds);
  assert.equal(summary.insertsInFlight, INSERTS_IN_FLIGHT);
  assert.equal(summary.warmUpShare, WARM_UP_SHARE);
  assert.equal(summary.rawRowsPerSec, 200);
  assert.equal(summary.sinkRowsPerSec, 160);
  assert.equal(summary.readEventsPerSec, 300);
  assert.equal(summary.ratio, 0.8);
  assert.equal(summary.wholeRatio, 0.8);
  assert.equal(summary.clickHouseMicrosPerRowRaw, 2);
  assert.equal(summary.clickHouseMicrosPerRowSink, null);
  assert.equal(summary.rounds, rounds);
  assert.deepEqual(Object.keys(summary).slice(0, 5), ['events', 'format', 'batchRows', 'transcodeWorker', 'insertsInFlight']);
});
