// Runs the test files through node's test runner, so the run closes with the count of tests.
// `node test/run.ts [unit|int|e2e ...]` picks tiers by file name (*.unit.spec.ts, *.int.spec.ts, *.e2e.spec.ts);
// `node test/run.ts test/x.unit.spec.ts …` (or `npm test -- test/x.unit.spec.ts`) runs just those files.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../core/config.js';
import { deleteTopicsUnder } from '../infra/topics.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const named = args.filter((arg) => arg.endsWith('.spec.ts'));
const tiers = args.filter((arg) => !arg.endsWith('.spec.ts'));
const wanted = tiers.length > 0 ? tiers : named.length > 0 ? [] : ['unit', 'int', 'e2e'];
/** No test and no test file runs longer than this (see the spawn below). */
const FILE_TIMEOUT_MS = 600_000;

function findSpecs(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...findSpecs(path));
    else if (wanted.some((tier) => entry.endsWith(`.${tier}.spec.ts`))) found.push(path);
  }
  return found;
}

const missing = named.filter((file) => !existsSync(join(root, file)));
if (missing.length > 0) {
  console.error(`no such test file: ${missing.join(', ')} (give paths from the repository root, e.g. test/bench/learning-summary.unit.spec.ts)`);
  process.exit(1);
}
const files = [
  ...new Set([...named.map((file) => relative(root, join(root, file))), ...(wanted.length > 0 ? findSpecs(join(root, 'test')).map((file) => relative(root, file)) : [])]),
].sort();
if (files.length === 0) {
  console.error(`no test files for tiers ${wanted.join(', ')}`);
  process.exit(1);
}
// One file at a time: integration tests share a 2-core machine with the broker and ClickHouse.
// A file whose process stays alive after its last test (a handle left open on a failure path) would hold the
// whole run until CI's own limit, showing nothing of which file: --test-force-exit ends each file's process
// when its tests end, and --test-timeout fails any test, and any file, still running after 10 minutes
// (the longest file takes about 2 here), so every run ends with its counts.
// That forced exit can end a file's process while results are still queued in its pipe to the runner (a Node
// bug, frequent from Node 22 on): they vanish from the counts and the run still exits 0. Writes to stdout and
// stderr made blocking, in the runner and in every file's process (node passes --import on to them), have all
// reached the pipe before the exit.
const BLOCKING_STDIO = `data:text/javascript,${encodeURIComponent('for (const stream of [process.stdout, process.stderr]) stream._handle?.setBlocking?.(true);')}`;
const result = spawnSync(
  process.execPath,
  ['--import', BLOCKING_STDIO, '--import', 'tsx', '--test', '--test-concurrency=1', '--test-force-exit', `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { cwd: root, stdio: 'inherit' },
);
// Integration tests isolate themselves under `test.<name>.<time>.<random>` topic prefixes; on a long-lived
// broker (a developer's) they would pile up run after run and slow it (see deleteTopicsUnder). A fresh
// clone starts clean anyway. Only on trajflow's own broker: a cluster given by TRAJFLOW_KAFKA_BROKERS may
// hold `test.*` topics that are not ours. TRAJFLOW_KEEP_TEST_TOPICS=1 keeps them for a look after a failure.
const config = loadConfig();
if ((wanted.some((tier) => tier !== 'unit') || named.some((file) => !file.endsWith('.unit.spec.ts'))) && config.kafka.managed && !process.env.TRAJFLOW_KEEP_TEST_TOPICS) {
  try {
    // Quietly: the run's last lines are the test counts.
    await deleteTopicsUnder(config, 'test');
  } catch (error) {
    console.error(`could not delete the test topics: ${(error as Error).message}`);
  }
}
process.exit(result.status ?? 1);
