// Unit: `trajflow --help` lists every command, each command answers --help with its usage (exit 0), and a
// bad flag value exits 2 with a message that says what to pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../bin/main.js';

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

test('--config on any command: a bad value from the file exits 2 and names the file; a missing file says so', async () => {
  const { writeFileSync, mkdtempSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'trajflow-config-'));
  const file = join(dir, 'trajflow.json');
  writeFileSync(file, JSON.stringify({ learner: { runId: 'r', lr: -1 }, train: { env: 'Chess' } }));
  const learner = await capture(['learner', '--config', file]);
  assert.equal(learner.code, 2);
  assert.match(learner.err, /--lr needs a positive number, got '-1' \(--lr was set by config file .*trajflow\.json\)/);
  const train = await capture(['train', `--config=${file}`]);
  assert.equal(train.code, 2);
  assert.match(train.err, /--env Chess: trajflow train knows/);
  const processors = await capture(['processors', '--config', file, '--bogus', 'x']);
  assert.equal(processors.code, 2, 'node parseArgs refusals are usage errors too');
  const missing = await capture(['eval', '--config', join(dir, 'missing.json')]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /config file .*missing\.json: ENOENT/);
  const model = await capture(['learner', '--run-id', 'r', '--model', '{"widht": 32}']);
  assert.equal(model.code, 2);
  assert.match(model.err, /--model: unknown setting "widht"; known: .*width/);
  const loss = await capture(['learner', '--run-id', 'r', '--loss', '{"clipHig": 0.3}']);
  assert.equal(loss.code, 2);
  assert.match(loss.err, /unknown policy loss option 'clipHig'/);
});
