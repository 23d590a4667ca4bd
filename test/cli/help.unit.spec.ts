// Unit: `trajflow --help` lists every command, each command answers --help with its usage (exit 0), and a
// bad flag value exits 2 with a message that says what to pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../cli/main.js';

async function capture(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  console.error = (...a: unknown[]) => void err.push(a.join(' '));
  try {
    return { code: await main(argv), out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

const COMMANDS = ['up', 'down', 'status', 'train', 'actors', 'processors', 'learner', 'sink', 'detectors', 'dashboard', 'replay', 'eval', 'bench'];

test('trajflow --help lists every command', async () => {
  const { code, out } = await capture(['--help']);
  assert.equal(code, 0);
  for (const name of COMMANDS) assert.match(out, new RegExp(`^  ${name} `, 'm'), name);
});

for (const name of COMMANDS) {
  test(`trajflow ${name} --help prints its usage`, async () => {
    const { code, out } = await capture([name, '--help']);
    assert.equal(code, 0);
    assert.match(out, /usage: trajflow /);
  });
}

test('an unknown command exits 2; bad values exit 2 naming the flag and the fix', async () => {
  assert.equal((await capture(['nonsense'])).code, 2);
  const lr = await capture(['learner', '--run-id', 'r', '--lr', '-1']);
  assert.equal(lr.code, 2);
  assert.match(lr.err, /--lr needs a positive number, got '-1'/);
  const env = await capture(['train', '--env', 'Chess']);
  assert.equal(env.code, 2);
  assert.match(env.err, /trajflow train knows FrozenLake, Sokoban, Bandit/);
  const unknown = await capture(['learner', '--run-id', 'r', '--nope', '1']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.err, /unknown option '--nope'; usage: trajflow learner/);
});

test('trajflow train --config: settings from a JSON file, flags win, unknown settings are refused', async () => {
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { trainConfigFile } = await import('../../cli/train/command.js');
  const dir = mkdtempSync(join(tmpdir(), 'train-config-'));
  const good = join(dir, 'train.json');
  writeFileSync(good, JSON.stringify({ env: 'Sokoban', updates: 20, envOptions: { maxTurns: 8 }, groupSize: 4 }));
  assert.deepEqual(trainConfigFile(good), { '--env': 'Sokoban', '--updates': '20', '--env-options': '{"maxTurns":8}', '--group-size': '4' });
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ envName: 'Sokoban' }));
  assert.throws(() => trainConfigFile(bad), /unknown setting "envName"; use env, run-id/);
  const result = await capture(['train', '--config', join(dir, 'missing.json')]);
  assert.equal(result.code, 2);
  assert.match(result.err, /--config .*missing\.json: ENOENT/);
});
