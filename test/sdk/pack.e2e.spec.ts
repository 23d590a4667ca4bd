// End to end: the SDK as another project gets it. `npm pack` builds and packs trajflow (prepack runs
// scripts/build-sdk.mjs), the tarball is installed into an empty project, and a script there that imports only
// 'trajflow' publishes one finished one-step episode, reads it back from the steps topic, and waits for the
// trajectory the processors (run from this repository under the test's own topic prefix) make of it. The
// installed package's types are checked with tsc, and its CLI is run from the tarball.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../core/config.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const INSTALL_TIMEOUT_MS = 8 * 60_000; // tfjs and the rest come from npm's cache (--prefer-offline), else the registry
const work = mkdtempSync(join(tmpdir(), 'trajflow-sdk-'));
const app = join(work, 'app');
const installed = join(app, 'node_modules', 'trajflow');
const TSC = join(projectRoot, 'node_modules', 'typescript', 'bin', 'tsc');

/** This process's environment without npm's own variables (the test may run under `npm test`). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, timeoutMs: number, env = cleanEnv()): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
}

const output = (result: SpawnSyncReturns<string>) => `exit ${result.status}\n${result.stdout}\n${result.stderr}`;

before(
  () => {
    const packed = run('npm', ['pack', '--json', '--pack-destination', work], projectRoot, 3 * 60_000);
    assert.equal(packed.status, 0, output(packed));
    const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
    const install = run('npm', ['install', join(work, filename), '--prefer-offline', '--no-audit', '--no-fund'], app, INSTALL_TIMEOUT_MS);
    assert.equal(install.status, 0, output(install));
  },
  { timeout: INSTALL_TIMEOUT_MS + 4 * 60_000 },
);

after(() => rmSync(work, { recursive: true, force: true }));

test('the package holds the build, its schema files and a patched kafkajs of its own, and no tests', () => {
  for (const file of ['dist/sdk/index.js', 'dist/sdk/index.d.ts', 'dist/schemas/step/v1.avsc', 'dist/schemas/sample/v2.avsc', 'bin/trajflow.mjs']) {
    assert.ok(existsSync(join(installed, file)), `${file} is in the package`);
  }
  assert.equal(existsSync(join(installed, 'test')), false, 'the tests are not packed');
  // The SDK's build holds only the layers it exports: no learner (tfjs), storage (ClickHouse) or api (express).
  assert.deepEqual(readdirSync(join(installed, 'dist')).sort(), ['core', 'envs', 'schemas', 'sdk', 'streams']);
  // kafkajs is bundled as trajflow's node_modules holds it, patched: install scripts may not run in the
  // consumer's project (npm's allowScripts, --ignore-scripts), and a hoisted kafkajs is not trajflow's to patch.
  const filter = readFileSync(join(installed, 'node_modules', 'kafkajs', 'src', 'consumer', 'filterAbortedMessages.js'), 'utf8');
  assert.match(filter, /trajflow: patched/);
});

test('the installed declarations type-check a step, and refuse one whose field has the wrong type', { timeout: 360_000 }, () => {
  const step = (stepIndex: string) =>
    `import { connectBackbone, loadConfig, type StepEvent } from 'trajflow';\n` +
    `import { SchemaRegistry } from 'trajflow/schemas';\n` +
    `export const step: StepEvent = { eventId: 'e', runId: 'r', envName: 'E', envVersion: 'v1', groupId: 'g', episodeId: 'g-0', stepIndex: ${stepIndex},\n` +
    `  observation: 'o', observationTokenIds: null, action: 'a', actionTokenIds: [1], actionLogProbs: [-0.5], policyVersion: 0, reward: 0,\n` +
    `  terminated: true, truncated: false, actionValid: true, stateKey: null, metrics: { success: 1 }, info: {}, eventTimeMs: 1 };\n` +
    `export const connect = () => connectBackbone(loadConfig());\n` +
    `export const current = () => SchemaRegistry.fromSchemasDir().current('step').fingerprintHex;\n`;
  writeFileSync(join(app, 'good.ts'), step('0'));
  writeFileSync(join(app, 'bad.ts'), step("'zero'"));
  // One tsc over both files (a few seconds of CPU); --skipLibCheck: the declarations are tsc's own output, and
  // what is checked is that a consumer's code resolves 'trajflow' and 'trajflow/schemas' to them.
  const args = ['--noEmit', '--strict', '--skipLibCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
  const types = ['--typeRoots', join(projectRoot, 'node_modules', '@types'), '--types', 'node'];
  const tsc = run(process.execPath, [TSC, ...args, ...types, 'good.ts', 'bad.ts'], app, 300_000);
  assert.equal(tsc.status, 2, output(tsc));
  const errors = tsc.stdout.split('\n').filter((line) => /^\S+\.ts\(/.test(line));
  assert.deepEqual(
    errors.map((line) => line.replace(/\(3,\d+\)/, '(3,_)')),
    ["bad.ts(3,_): error TS2322: Type 'string' is not assignable to type 'number'."],
    output(tsc),
  );
});

test('a script importing only trajflow publishes a step, reads it back, and the processors make it a trajectory', { timeout: 240_000 }, async () => {
  const prefix = uniqueName('sdk');
  const runId = `sdk-${Date.now().toString(36)}`;
  let processors: ChildProcess | undefined;
  try {
    // The processors of this repository under the test's prefix (they create its topics); the step announces a
    // group of one episode (info.groupSize), complete at its end, and a group of one is not too small.
    let log = '';
    processors = spawn(process.execPath, [join(projectRoot, 'bin', 'trajflow.mjs'), 'processors', '--min-group-size', '1', '--flush-ms', '50'], {
      cwd: projectRoot,
      env: cleanEnv({ TRAJFLOW_TOPIC_PREFIX: prefix }),
    });
    processors.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    processors.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    await waitFor(() => log.includes('processors: consumer group') || processors!.exitCode !== null, 'the processors to start', 120_000, 200);
    assert.match(log, /processors: consumer group/, log);

    copyFileSync(join(projectRoot, 'test', 'sdk', 'app', 'publish-and-read.mjs'), join(app, 'publish-and-read.mjs'));
    const started = Date.now();
    const script = await runAsync(process.execPath, ['publish-and-read.mjs', runId], app, cleanEnv({ TRAJFLOW_TOPIC_PREFIX: prefix }), 120_000);
    assert.equal(script.code, 0, `${script.out}\n${script.err}\nprocessors:\n${log}`);
    const lines = script.out
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const [read, made] = [lines.find((l) => l.kind === 'step'), lines.find((l) => l.kind === 'trajectory')];
    assert.ok(read && made, script.out);

    // The step read back is the step published, but for the float32 log-probs.
    const published = read.published as Record<string, unknown> & { actionLogProbs: number[] };
    assert.deepEqual(read.read, [{ ...published, actionLogProbs: published.actionLogProbs.map(Math.fround) }]);

    const trajectory = made.trajectory as Record<string, unknown> & { steps: Record<string, unknown>[] };
    assert.equal(trajectory.runId, runId);
    assert.equal(trajectory.episodeId, published.episodeId);
    assert.equal(trajectory.outcome, 'terminated');
    assert.equal(trajectory.success, true, 'metrics.success = 1 on the last step');
    assert.equal(trajectory.stepCount, 1);
    assert.equal(trajectory.totalReward, 1);
    assert.equal(trajectory.steps[0]!.action, published.action);
    assert.deepEqual(trajectory.steps[0]!.actionTokenIds, published.actionTokenIds);
    console.log(`sdk script: published, read back and got the trajectory in ${Date.now() - started} ms`);
  } finally {
    processors?.kill('SIGTERM');
  }
});

test("the package's CLI runs from its TypeScript sources (through tsx)", { timeout: 120_000 }, () => {
  const help = run(join(app, 'node_modules', '.bin', 'trajflow'), ['--help'], app, 90_000);
  assert.equal(help.status, 0, output(help));
  assert.match(help.stdout, /^usage: trajflow <command>/);
  assert.match(help.stdout, /\n {2}processors\s/);
});

function runAsync(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, timeout: timeoutMs });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}
