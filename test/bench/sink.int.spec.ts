// Integration (real Kafka, real ClickHouse): `bench sink` end to end at a tiny size. Each side runs in a
// process of its own (bench/sink-side.ts); measureSink itself checks that both databases hold every row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../core/config.js';
import { connectBackbone } from '../../streams/index.js';
import { measureSink } from '../../bench/sink.js';

test('bench sink: raw, read and sink sides each run in their own process and report finite rates', { timeout: 180_000 }, async () => {
  const backbone = await connectBackbone(loadConfig(), { clientId: 'test-bench-sink' });
  try {
    const progress: string[] = [];
    const result = await measureSink(backbone, 12_000, 1, (line) => progress.push(line));
    assert.deepEqual(progress, ['publishing 12000 step events', 'round 1/1: raw', 'round 1/1: read', 'round 1/1: sink']);
    assert.equal(result.format, 'RowBinary');
    assert.equal(result.rounds.length, 1);
    const [round] = result.rounds;
    for (const [name, value] of Object.entries(round!)) {
      // ClickHouse's CPU is read from /proc only when trajflow started the server (null otherwise).
      if (value === null && name.startsWith('clickHouse')) continue;
      assert.ok(typeof value === 'number' && Number.isFinite(value) && value > 0, `${name} = ${value}`);
    }
    assert.equal(result.ratio, round!.sinkRowsPerSec / round!.rawRowsPerSec);
    // The steady rate leaves out the warm-up, so it is at least the whole side's rate minus timer noise.
    assert.ok(round!.sinkRowsPerSec > 0.5 * round!.sinkWholeRowsPerSec);
  } finally {
    await backbone.close();
  }
});
