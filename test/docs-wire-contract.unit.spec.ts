// Unit: docs/reference/wire-contract.md says what the schemas and schemas/validate.ts do. Its fingerprint, partition
// and field tables are generated (scripts/docs-wire-contract.mjs); its rule tables and dead-letter reasons are
// written by hand, so this test holds them to the code: every rule names a field the event has, every field
// validate.ts checks has a rule, and every dead-letter reason the code writes is explained.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '../schemas/index.js';
import { avroTypeName, eventVersions, fieldRows, generatedBlocks, renderPage, WIRE_CONTRACT_PAGE } from '../scripts/docs-wire-contract.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const page = readFileSync(WIRE_CONTRACT_PAGE, 'utf8');
const registry = SchemaRegistry.fromSchemasDir();
const currentFields = new Map([...eventVersions(registry)].map(([event, versions]) => [event as string, fieldRows(JSON.parse(versions.at(-1)!.schema))]));

/** The text of a `## heading` section, up to the next `## `. */
function section(heading: string): string {
  const start = page.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `the page has a "## ${heading}" section`);
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

/** The rows of the tables under each `### \`event\`` heading of a section: event → first cells, second cells. */
function tablesByEvent(text: string): Map<string, string[][]> {
  const tables = new Map<string, string[][]>();
  let event: string | undefined;
  for (const line of text.split('\n')) {
    const heading = /^### `([a-z_]+)`/.exec(line);
    if (heading) {
      event = heading[1]!;
      tables.set(event, []);
    } else if (event && line.startsWith('| ') && !line.startsWith('| field') && !line.startsWith('|---')) {
      tables.get(event)!.push(line.split(/(?<!\\) \| /).map((cell) => cell.replace(/^\| |\s*\|$/g, '')));
    }
  }
  return tables;
}

const backticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

test('the generated tables are what the schemas give today (`npm run docs` rewrites them)', () => {
  assert.ok(page === renderPage(page, generatedBlocks(registry)), 'docs/reference/wire-contract.md is stale: run `npm run docs` and commit it');
});

test('the Avro type names the page uses', () => {
  const step = new Map(currentFields.get('step')!.map((row) => [row.path, row.type]));
  assert.equal(step.get('eventTimeMs'), 'long (timestamp-millis)');
  assert.equal(step.get('observationTokenIds'), 'null | array<int>');
  assert.equal(step.get('actionLogProbs'), 'array<float>');
  assert.equal(step.get('metrics'), 'map<double>');
  const trajectory = new Map(currentFields.get('trajectory')!.map((row) => [row.path, row.type]));
  assert.equal(trajectory.get('steps[].stepIndex'), 'int', 'a nested record is listed field by field');
  assert.equal(avroTypeName({ type: 'enum', name: 'Side', symbols: ['A', 'B'] }), 'enum Side {A, B}');
});

test('every field of every event is in its field table, with its Avro type', () => {
  const tables = tablesByEvent(section('Fields'));
  assert.deepEqual([...tables.keys()].sort(), [...currentFields.keys()].sort(), 'one field table per event');
  for (const [event, rows] of currentFields) {
    const documented = new Map(tables.get(event)!.map((cells) => [backticked(cells[0]!)[0], backticked(cells[1]!)[0]?.replace(/\\\|/g, '|')]));
    for (const row of rows) assert.equal(documented.get(row.path), row.type, `${event}.${row.path} (${row.type}) in the field table`);
    assert.equal(documented.size, rows.length, `${event}: the table lists no field the schema lacks`);
  }
});

test('every rule names a field its event has', () => {
  const rules = tablesByEvent(section('Field rules'));
  assert.ok(rules.size >= 9, `a rule table per event (${[...rules.keys()].join(', ')})`);
  for (const [event, rows] of rules) {
    const paths = new Set(currentFields.get(event)?.map((row) => row.path));
    assert.ok(paths.size > 0, `### \`${event}\` is an event`);
    for (const cells of rows) {
      const named = backticked(cells[0]!);
      assert.ok(named.length > 0, `${event}: a rule row names its field in backticks: ${cells.join(' | ')}`);
      for (const field of named) assert.ok(paths.has(field), `${event}: the rule for \`${field}\` names no field of the schema`);
    }
  }
});

/** validate.ts's check function of each event, from its CHECKS table. */
function checkFunctions(source: string): Map<string, string> {
  const table = /const CHECKS\b.*= {\n([\s\S]*?)\n};/.exec(source);
  assert.ok(table, 'validate.ts has its CHECKS table');
  return new Map([...table[1]!.matchAll(/(\w+): (\w+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The field names a check function (and the functions it calls in validate.ts) passes to its checks. */
function checkedFields(source: string, name: string, seen = new Set<string>()): Set<string> {
  const fields = new Set<string>();
  if (seen.has(name)) return fields;
  seen.add(name);
  const start = source.indexOf(`\nfunction ${name}(`);
  if (start < 0) return fields;
  const body = source.slice(start, source.indexOf('\n}\n', start));
  for (const pattern of [/\(\s*'([A-Za-z][\w.]*)'/g, /\(`([A-Za-z]\w*)[[$]/g, /\['([A-Za-z]\w*)',/g]) for (const m of body.matchAll(pattern)) fields.add(m[1]!);
  for (const call of body.matchAll(/\b(\w+)\(/g)) for (const field of checkedFields(source, call[1]!, seen)) fields.add(field);
  return fields;
}

test("every field schemas/validate.ts checks has a rule in its event's table", () => {
  const source = readFileSync(join(root, 'schemas', 'validate.ts'), 'utf8');
  const rules = tablesByEvent(section('Field rules'));
  const checks = checkFunctions(source);
  assert.deepEqual([...checks.keys()].sort(), [...currentFields.keys()].sort(), 'a check per event');
  for (const [event, fn] of checks) {
    const checked = checkedFields(source, fn);
    assert.ok(checked.size >= 4, `found the fields ${fn} checks (${[...checked].join(', ')})`);
    const documented = (rules.get(event) ?? []).flatMap((cells) => backticked(cells[0]!));
    for (const field of checked) {
      assert.ok(
        documented.some((path) => path === field || path.endsWith(`.${field}`)),
        `${event}.${field} is checked by ${fn} in schemas/validate.ts but has no rule in the page's ### \`${event}\` table`,
      );
    }
  }
  assert.ok(checkedFields(source, checks.get('step')!).has('actionLogProbs'), 'the extraction sees the step rules');
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sources(path) : entry.endsWith('.ts') ? [path] : [];
  });
}

test('every dead-letter reason the code writes is explained', () => {
  const table = section('Dead letters');
  const explained = new Set(
    table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => backticked(line.split(' | ')[0]!)),
  );
  const decodeFailure = /export type DecodeFailure = ([^;]+);/.exec(readFileSync(join(root, 'schemas', 'errors.ts'), 'utf8'));
  assert.ok(decodeFailure, 'schemas/errors.ts declares DecodeFailure');
  const reasons = new Set([...decodeFailure[1]!.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]!));
  for (const folder of ['api', 'streams', 'processors', 'storage']) {
    for (const file of sources(join(root, folder))) for (const m of readFileSync(file, 'utf8').matchAll(/reason: '([a-z-]+)'/g)) reasons.add(m[1]!);
  }
  assert.ok(reasons.has('unknown-fingerprint') && reasons.has('bad-json'), [...reasons].join(', '));
  for (const reason of reasons) assert.ok(explained.has(reason), `dead-letter reason '${reason}' is not in the page's table`);
});

test('the page is linked from the README and the docs index', () => {
  for (const file of ['README.md', join('docs', 'README.md')]) {
    assert.ok(readFileSync(join(root, file), 'utf8').includes('reference/wire-contract.md'), `${file} links the wire contract`);
  }
});
