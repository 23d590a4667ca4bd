#!/usr/bin/env node
// Writes the generated blocks of docs/reference/wire-contract.md from the schemas themselves, so the page a
// producer in another language works from cannot drift from what trajflow reads: the fingerprint and header of
// every schema version (computed by schemas/registry.ts, the code that writes and reads them), which partition
// a key goes to under the Java client's murmur2 and under librdkafka's default CRC32 partitioner, and the
// fields of every event with their Avro types, defaults and the version that added them.
//   node --import tsx scripts/docs-wire-contract.mjs           rewrite the generated blocks
//   node --import tsx scripts/docs-wire-contract.mjs --check   write nothing; exit 1 when the page is stale
// The hand-written rest of the page (rules, episode end, group completion, dead letters) is checked by
// test/docs-wire-contract.unit.spec.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { SchemaRegistry } from '../schemas/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
export const WIRE_CONTRACT_PAGE = join(root, 'docs', 'reference', 'wire-contract.md');

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/** An Avro type as the page writes it: `array<int>`, `null | string`, `long (timestamp-millis)`, a record's name. */
export function avroTypeName(type) {
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.map(avroTypeName).join(' | ');
  switch (type.type) {
    case 'array':
      return `array<${avroTypeName(type.items)}>`;
    case 'map':
      return `map<${avroTypeName(type.values)}>`;
    case 'record':
    case 'error':
      return type.name;
    case 'enum':
      return `enum ${type.name} {${type.symbols.join(', ')}}`;
    case 'fixed':
      return `fixed ${type.name} (${type.size} bytes)`;
    default:
      if (PRIMITIVES.has(type.type)) return type.logicalType ? `${type.type} (${type.logicalType})` : type.type;
      throw new Error(`docs-wire-contract: an Avro type it cannot name: ${JSON.stringify(type)}`);
  }
}

/** The record a field holds directly, in an array, a map or a union with null, with the path step it adds. */
function nestedRecord(type) {
  if (Array.isArray(type)) {
    for (const branch of type) {
      const found = nestedRecord(branch);
      if (found) return found;
    }
    return null;
  }
  if (typeof type !== 'object') return null;
  if (type.type === 'record') return { record: type, step: '.' };
  if (type.type === 'array') return nestedRecord(type.items) && { record: nestedRecord(type.items).record, step: '[].' };
  if (type.type === 'map') return nestedRecord(type.values) && { record: nestedRecord(type.values).record, step: '{}.' };
  return null;
}

/** Every field of a record schema, nested records' fields included as `steps[].stepIndex` / `batch.batchId`. */
export function fieldRows(schema, prefix = '') {
  return schema.fields.flatMap((field) => {
    const row = { path: `${prefix}${field.name}`, type: avroTypeName(field.type), default: 'default' in field ? JSON.stringify(field.default) : '', doc: field.doc ?? '' };
    const nested = nestedRecord(field.type);
    return nested ? [row, ...fieldRows(nested.record, `${prefix}${field.name}${nested.step}`)] : [row];
  });
}

/** The registered versions of every event, oldest first. */
export function eventVersions(registry = SchemaRegistry.fromSchemasDir()) {
  const byEvent = new Map();
  for (const entry of [...registry.entries()].sort((a, b) => (a.event === b.event ? a.version - b.version : a.event < b.event ? -1 : 1))) {
    if (!byEvent.has(entry.event)) byEvent.set(entry.event, []);
    byEvent.get(entry.event).push(entry);
  }
  return byEvent;
}

// Table cells are Markdown: a pipe ends the cell and `<prefix>` would be read as an HTML tag.
const cell = (text) =>
  String(text)
    .replace(/\|/g, '\\|')
    .split('`')
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, '&lt;') : part))
    .join('`');
const code = (text) => (text === '' ? '' : `\`${String(text).replace(/\|/g, '\\|')}\``);

function fingerprintsBlock(byEvent) {
  const rows = [...byEvent.values()].flatMap((versions) =>
    versions.map((entry, i) => {
      const current = i === versions.length - 1 ? ' (current)' : '';
      return `| \`${entry.event}\` | v${entry.version}${current} | \`${entry.fingerprintHex}\` | \`${entry.header.toString('hex').replace(/(..)/g, '$1 ').trim()}\` | [\`schemas/${entry.event}/v${entry.version}.avsc\`](../../schemas/${entry.event}/v${entry.version}.avsc) |`;
    }),
  );
  return ['| event | version | fingerprint (CRC-64-AVRO, hex) | the 10 header bytes on the wire | schema file |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** kafkajs' DefaultPartitioner — the Java client's murmur2, which trajflow's producers use (streams/partitioner.ts). */
function murmur2Partition(key, partitions) {
  const { Partitioners } = createRequire(import.meta.url)('kafkajs');
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0 }));
  return Partitioners.DefaultPartitioner()({ topic: 'env.steps', partitionMetadata, message: { key } });
}

/** librdkafka's default `consistent_random` for a non-empty key: CRC-32 of the key, modulo the partitions. */
const crc32Partition = (key, partitions) => crc32(Buffer.from(key, 'utf8')) % partitions;

function partitionsBlock() {
  const keys = ['task-42', 'run-1-g0', 'run-1-g1', 'run-1-g2', 'run-1-g3', 'FrozenLake-seed-7'];
  const rows = keys.map((key) => {
    const java = murmur2Partition(key, 4);
    const crc = crc32Partition(key, 4);
    return `| \`${key}\` | ${java} | ${crc} | ${java === crc ? 'same' : '**differs**'} |`;
  });
  return [
    '| key (group id) | partition of 4, murmur2 (Java client, kafkajs, trajflow; librdkafka `murmur2_random`) | partition of 4, CRC32 (librdkafka default `consistent_random`) | |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

function fieldsBlock(byEvent) {
  const sections = [];
  for (const [event, versions] of byEvent) {
    const current = versions.at(-1);
    const since = (path) => versions.find((entry) => fieldRows(JSON.parse(entry.schema)).some((row) => row.path === path)).version;
    const schema = JSON.parse(current.schema);
    sections.push(
      `### \`${event}\` — \`${schema.namespace}.${schema.name}\` v${current.version}`,
      '',
      cell(schema.doc ?? ''),
      '',
      '| field | Avro type | default | since | meaning |',
      '|---|---|---|---|---|',
      ...fieldRows(schema).map((row) => `| \`${row.path}\` | ${code(row.type)} | ${code(row.default)} | v${since(row.path)} | ${cell(row.doc)} |`),
      '',
    );
  }
  return sections.join('\n').trimEnd();
}

/** The generated blocks by name: each sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`. */
export function generatedBlocks(registry) {
  const byEvent = eventVersions(registry);
  return { fingerprints: fingerprintsBlock(byEvent), partitions: partitionsBlock(), fields: fieldsBlock(byEvent) };
}

/** The page with every generated block replaced; throws when a block's markers are missing. */
export function renderPage(page, blocks) {
  let out = page;
  for (const [name, body] of Object.entries(blocks)) {
    const pattern = new RegExp(`(<!-- generated:${name} -->\\n)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!pattern.test(out)) throw new Error(`docs/reference/wire-contract.md has no <!-- generated:${name} --> … <!-- /generated:${name} --> block`);
    out = out.replace(pattern, (_, open, close) => `${open}${body}\n${close}`);
  }
  return out;
}

function main(argv) {
  const current = readFileSync(WIRE_CONTRACT_PAGE, 'utf8');
  const page = renderPage(current, generatedBlocks());
  if (argv.includes('--check')) {
    if (page === current) return 0;
    console.error('docs/reference/wire-contract.md is out of date with the schemas: run `npm run docs` (or node --import tsx scripts/docs-wire-contract.mjs) and commit it');
    return 1;
  }
  if (page !== current) writeFileSync(WIRE_CONTRACT_PAGE, page);
  console.error(`docs/reference/wire-contract.md: ${page === current ? 'up to date' : 'written'}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
