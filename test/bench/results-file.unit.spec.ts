// Unit: a bench's result carries what reproduces it (command, commit, date) and --save writes it under the
// results folder with a name no other run takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emitResult, provenance, resultFileName } from '../../bench/results-file.js';

test('provenance names the command without --save, the commit and an ISO date', () => {
  const p = provenance(['learning', '--path', 'real', '--seeds', '1', '--json', '--save'], new Date('2026-12-02T07:30:00.000Z'));
  assert.equal(p.command, 'trajflow bench learning --path real --seeds 1 --json');
  assert.equal(p.date, '2026-12-02T07:30:00.000Z');
  assert.match(p.commit, /^[0-9a-f]{12}(\+dirty)?$|^unknown/);
});

test('file names: bench, label and time, safe characters only', () => {
  assert.equal(resultFileName('learning', 'real-frozenlake-s1-k1', '2026-12-02T07:30:00.123Z'), 'learning-real-frozenlake-s1-k1-2026-12-02T073000Z.json');
  assert.equal(resultFileName('sink', undefined, '2026-12-02T07:30:00.000Z'), 'sink-2026-12-02T073000Z.json');
});

test('--save writes the JSON with its provenance; without it nothing is written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trajflow-results-'));
  try {
    emitResult(['sink'], { bench: 'sink', ratio: 0.9 }, undefined, dir);
    assert.deepEqual(readdirSync(dir), []);
    emitResult(['sink', '--save'], { bench: 'sink', ratio: 0.9 }, 'x', dir);
    const file = readdirSync(dir)[0] ?? '';
    assert.ok(file.startsWith('sink-x-'), file);
    const saved = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    assert.equal(saved.ratio, 0.9);
    assert.equal(saved.command, 'trajflow bench sink');
    assert.ok(typeof saved.commit === 'string' && typeof saved.date === 'string');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
