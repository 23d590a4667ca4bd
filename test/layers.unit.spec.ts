// Unit: the layer rules (.dependency-cruiser.cjs, docs/design/layers.md) hold on the sources, and they do catch
// what they are for — a cycle, an import against the order, a production import of test/ — on a small tree
// built in a temporary folder with the project's own rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

function cruise(cwd: string, paths: readonly string[]): { status: number | null; output: string } {
  const run = spawnSync(depcruise, ['--config', join(cwd, '.dependency-cruiser.cjs'), '--output-type', 'err', ...paths], { cwd, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

function tree(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'trajflow-layers-'));
  copyFileSync(join(root, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

test('the sources follow the layer rules: no cycle, no import against the order, no production import of test/', () => {
  const folders = [
    'api',
    'bench',
    'bin',
    'cli',
    'core',
    'detectors',
    'envs',
    'gateway',
    'infra',
    'learner',
    'processors',
    'rollout',
    'schemas',
    'storage',
    'streams',
    'tokenizer',
    'web',
    'sdk',
    'test',
    'scripts',
  ];
  const { status, output } = cruise(root, folders);
  assert.equal(status, 0, output);
  assert.match(output, /no dependency violations found/);
});

test('the rules catch a cycle, an import against the order, peers the rules do not allow, and production code importing test/', () => {
  const dir = tree({
    'core/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
    'core/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
    'schemas/up.ts': "import { run } from '../cli/run.js';\nexport const up = run;\n",
    'cli/run.ts': 'export const run = 1;\n',
    'processors/p.ts': "import { l } from '../learner/l.js';\nexport const p = l;\n",
    'learner/l.ts': 'export const l = 1;\n',
    'envs/e.ts': "import { r } from '../rollout/r.js';\nexport const e = r;\n",
    'rollout/r.ts': 'export const r = 1;\n',
    'bench/load.ts': "import { fixture } from '../test/fixture.js';\nexport const load = fixture;\n",
    'test/fixture.ts': 'export const fixture = 1;\n',
  });
  try {
    const { status, output } = cruise(dir, ['core', 'schemas', 'cli', 'processors', 'learner', 'envs', 'rollout', 'bench', 'test']);
    assert.notEqual(status, 0, output);
    assert.match(output, /no-circular: core\/a\.ts/);
    assert.match(output, /layer-schemas-tokenizer: schemas\/up\.ts → cli\/run\.ts/);
    assert.match(output, /peers-processors: processors\/p\.ts → learner\/l\.ts/);
    assert.match(output, /peers-envs: envs\/e\.ts → rollout\/r\.ts/);
    assert.match(output, /no-test-in-production: bench\/load\.ts → test\/fixture\.ts/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the browser code imports only browser code and the uPlot URL, and nothing but tests imports it', () => {
  const dir = tree({
    'web/static/app.js':
      "import { h } from './dom.js';\nimport uPlot from '/vendor/uplot/uPlot.esm.js';\n/** @import { Run } from './types.js' */\nexport const app = [h, uPlot];\n",
    'web/static/dom.js': 'export const h = 1;\n',
    'web/static/types.d.ts': 'export interface Run { readonly runId: string }\n',
    'web/static/server-side.js': "import { config } from '../../core/config.js';\n/** @import { Row } from '../../core/row.js' */\nexport const s = config;\n",
    'web/static/elsewhere.js': "import x from '/vendor/other.js';\nexport const e = x;\n",
    'core/config.ts': 'export const config = 1;\n',
    'core/row.ts': 'export interface Row { readonly id: string }\n',
    'api/page.ts': "import { h } from '../web/static/dom.js';\nexport const page = h;\n",
    'test/types.ts': "import type { Run } from '../web/static/types.js';\nexport type R = Run;\n",
  });
  try {
    const { status, output } = cruise(dir, ['web', 'core', 'api', 'test']);
    assert.notEqual(status, 0, output);
    assert.match(output, /browser-code-imports-browser-code: web\/static\/server-side\.js → core\/config\.ts/);
    assert.match(output, /browser-code-imports-browser-code: web\/static\/server-side\.js → core\/row\.ts/, 'a JSDoc import counts');
    assert.match(output, /browser-not-to-unresolvable: web\/static\/elsewhere\.js → \/vendor\/other\.js/);
    assert.match(output, /no-import-of-browser-code: api\/page\.ts → web\/static\/dom\.js/);
    assert.doesNotMatch(output, /web\/static\/app\.js|test\/types\.ts/, 'the page itself and a test of its types pass');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
