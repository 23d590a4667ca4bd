// Unit: settings from a config file become flags before the typed ones (so typed flags win), in both
// the flat and the per-command shape; TRAJFLOW_CONFIG needs the per-command shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingsToArgs, withConfigFile } from '../../../infra/cli/config-file.js';
import { learnerInputFromArgs } from '../../../learner/command.js';

const COMMANDS = ['train', 'learner', 'bench', 'up'];
const dir = mkdtempSync(join(tmpdir(), 'config-file-'));
function file(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
  return path;
}

test('JSON values become flags: camelCase to kebab-case, switches, repeats, objects as JSON', () => {
  assert.deepEqual(settingsToArgs({ groupSize: 4, env: 'Sokoban', json: true, quiet: false, filter: ['a', 'b'], envOptions: { maxTurns: 8 } }, 'f.json'), [
    '--group-size',
    '4',
    '--env',
    'Sokoban',
    '--json',
    '--filter',
    'a',
    '--filter',
    'b',
    '--env-options',
    '{"maxTurns":8}',
  ]);
  assert.throws(() => settingsToArgs({ '--lr': 1 }, 'f.json'), /"--lr" is not a setting name; use flag names without dashes/);
  assert.throws(() => settingsToArgs({ config: 'other.json' }, 'f.json'), /cannot name another config file/);
});

test('a flat file: its flags go before the typed ones, --config is removed, positionals stay first', () => {
  const path = file('flat.json', { lr: 0.01, width: 32 });
  const got = withConfigFile('bench', ['learning', '--lr', '0.5', '--config', path], COMMANDS, {});
  assert.deepEqual(got.args, ['learning', '--lr', '0.01', '--width', '32', '--lr', '0.5']);
  assert.deepEqual(got.fromFile, ['--lr', '--width']);
  assert.equal(got.sectioned, false);
});

test('typed flags win over the file for the learner, and nested objects reach its config', () => {
  const path = file('learner.json', { learner: { runId: 'from-file', lr: 0.01, width: 32, loss: { clipRatioHigh: 0.3 } }, train: { env: 'Sokoban' } });
  const { args } = withConfigFile('learner', ['--lr', '0.002', '--config', path], COMMANDS, {});
  const input = learnerInputFromArgs(args);
  assert.equal(input.runId, 'from-file');
  assert.equal(input.optimizer?.learningRate, 0.002, 'the typed flag wins');
  assert.equal(input.model?.width, 32);
  assert.equal(input.loss?.clipRatioHigh, 0.3);
});

test('a sectioned file: each command reads its own section, a command without one gets nothing', () => {
  const path = file('sections.json', { train: { env: 'Sokoban' }, learner: { lr: 0.01 } });
  assert.deepEqual(withConfigFile('train', ['--config', path], COMMANDS, {}).args, ['--env', 'Sokoban']);
  assert.deepEqual(withConfigFile('up', [], COMMANDS, { TRAJFLOW_CONFIG: path }).args, []);
  assert.deepEqual(withConfigFile('learner', ['--run-id', 'r'], COMMANDS, { TRAJFLOW_CONFIG: path }).args, ['--lr', '0.01', '--run-id', 'r']);
  assert.equal(withConfigFile('train', [], COMMANDS, { TRAJFLOW_CONFIG: path }).sectioned, true);
});

test('bad files say how to fix them', () => {
  assert.throws(() => withConfigFile('train', ['--config'], COMMANDS, {}), /--config needs a file name/);
  assert.throws(() => withConfigFile('train', ['--config', file('broken.json', '{"env": ')], COMMANDS, {}), /config file .*broken\.json: .*JSON.*give a JSON object/);
  assert.throws(() => withConfigFile('train', ['--config', file('array.json', [1])], COMMANDS, {}), /must hold a JSON object/);
  assert.throws(
    () => withConfigFile('train', ['--config', file('mixed.json', { train: {}, lr: 1 })], COMMANDS, {}),
    /mixes command sections \(train\) with top-level settings \(lr\)/,
  );
  assert.throws(() => withConfigFile('train', ['--config', file('section.json', { train: 'Sokoban' })], COMMANDS, {}), /"train" must be an object of settings/);
  assert.throws(() => withConfigFile('train', [], COMMANDS, { TRAJFLOW_CONFIG: file('flat-env.json', { env: 'Sokoban' }) }), /TRAJFLOW_CONFIG=.* needs one section per command/);
});
