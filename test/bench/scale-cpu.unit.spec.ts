import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuPerStep, cpuPerStepRatio } from '../../bench/scale-cpu.js';

test('CPU per step adds the processes and the broker, in seconds per step', () => {
  const r = cpuPerStep({ processesMs: [300, 500], brokerMs: 200 }, 1000);
  assert.equal(r.cpuSecondsPerStep, 0.001);
  assert.equal(r.processesCpuSecondsPerStep, 0.0008);
  assert.equal(r.brokerCpuSecondsPerStep, 0.0002);
});

test('a broker that cannot be read counts as 0 in the total and is reported as null', () => {
  const r = cpuPerStep({ processesMs: [400], brokerMs: null }, 100);
  assert.equal(r.cpuSecondsPerStep, 0.004);
  assert.equal(r.brokerCpuSecondsPerStep, null);
});

test('the ratio is more processes over one: 4 processes spending twice the CPU per step give 2', () => {
  const one = cpuPerStep({ processesMs: [1000], brokerMs: 1000 }, 1000);
  const four = cpuPerStep({ processesMs: [1000, 1000, 1000, 500], brokerMs: 500 }, 1000);
  assert.equal(cpuPerStepRatio(one, four), 2);
});

test('no steps is refused, not a division by zero', () => {
  assert.throws(() => cpuPerStep({ processesMs: [1], brokerMs: 1 }, 0), /steps must be > 0/);
});
