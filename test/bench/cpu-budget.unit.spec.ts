// The CPU budget of `bench processors` (cpu-budget.ts) with hand-computed numbers, and the CPU meter every
// side of it is measured with (server-cpu.ts): a window sees the CPU burnt inside it and not outside it; the
// managed broker's CPU sums every node of a cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuBudgetMicrosPerStep } from '../../bench/cpu-budget.js';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CpuMeter, kafkaCpuMs, pidCpuMs } from '../../bench/server-cpu.js';
import { kafkaNodes } from '../../infra/kafka/server.js';
import { loadConfig } from '../../core/config.js';

test('unit: 0.5 of a 200,000 events/s ceiling on 2 cores leaves 20 µs of CPU per step', () => {
  // 0.5 × 200,000 = 100,000 steps/s; 2 cores = 2,000,000 µs of CPU a second; 2e6 / 1e5 = 20.
  assert.equal(cpuBudgetMicrosPerStep(2, 200_000, 0.5), 20);
  // 1 core, 50,000 events/s, the whole rate: 1e6 / 5e4 = 20 µs too.
  assert.equal(cpuBudgetMicrosPerStep(1, 50_000, 1), 20);
  assert.throws(() => cpuBudgetMicrosPerStep(2, 0, 0.5), /must be > 0/);
  assert.throws(() => cpuBudgetMicrosPerStep(2, 100_000, Number.NaN), /must be > 0/);
});

test('unit: a CPU meter counts the work inside its window, per item, and refuses to be read before it stopped', () => {
  const meter = new CpuMeter(loadConfig());
  assert.throws(() => meter.perItem(1), /before stop/);
  assert.throws(() => meter.stop(), /before start/);
  // Spins until this process has used `ms` of CPU (not of wall time, which a loaded machine stretches).
  const spin = (ms: number) => {
    const start = process.cpuUsage();
    let x = 0;
    for (;;) {
      for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
      const used = process.cpuUsage(start);
      if ((used.user + used.system) / 1000 >= ms) return x;
    }
  };
  spin(100); // outside the window: not counted
  meter.start();
  spin(60);
  meter.stop();
  spin(100); // after it: not counted either
  const cpu = meter.perItem(1000);
  // 60 ms of CPU over 1,000 items is ≈ 60 µs each (other threads of the process add a little); the 100 ms
  // spins on each side must not leak in (that would be ≥ 160 µs).
  assert.ok(cpu.processMicros > 20 && cpu.processMicros < 150, `process ${cpu.processMicros} µs per item`);
  if (cpu.mainThreadMicros !== null) {
    assert.ok(cpu.mainThreadMicros > 20 && cpu.mainThreadMicros < 150, `main thread ${cpu.mainThreadMicros} µs per item`);
  }
});

test("the managed broker's CPU is every node's: a 3-node cluster's figure is its three processes', and unreadable when one node's is", () => {
  const home = mkdtempSync(join(tmpdir(), 'server-cpu-'));
  const config = loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_NODES: '3' });
  const nodes = kafkaNodes(config);
  assert.equal(nodes.length, 3);
  // Every node's pid file names this process: the sum is three times its CPU, read around the call.
  for (const node of nodes) {
    mkdirSync(dirname(node.paths.pidFile), { recursive: true });
    writeFileSync(node.paths.pidFile, String(process.pid));
  }
  const before = pidCpuMs(process.pid)!;
  const sum = kafkaCpuMs(config)!;
  const after = pidCpuMs(process.pid)!;
  assert.ok(sum >= 3 * before && sum <= 3 * after, `${sum} within 3 × [${before}, ${after}]`);
  writeFileSync(nodes[2]!.paths.pidFile, 'not a pid');
  assert.equal(kafkaCpuMs(config), null);
});
