// Interoperability with Apache Avro's Java implementation (the reference one), for every event:
//  (a) the fingerprint and Parsing Canonical Form of each current schema match Java's
//      SchemaNormalization.parsingFingerprint64 / toParsingForm;
//  (b) trajflow → Java: single-object messages written by EventCodec are read by Java's
//      BinaryMessageDecoder (which checks marker and fingerprint) and give the fixture's values;
//  (c) Java → trajflow: messages written by Java's BinaryMessageEncoder decode with EventCodec to
//      the fixture's values.
// The Java side is test/interop/java (a Maven project, one shaded jar); it is built on first use
// and rebuilt only when its sources or pom are newer than the jar.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventCodec, SchemaRegistry } from '../../schemas/index.js';
import type { EventName } from '../../schemas/generated/types.js';
import { sampleEvents } from '../../bench/load/events.js';
import { type Normalized, normalize, parseJson, toJson } from './avro-normalize.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const schemasDir = join(root, 'schemas');
const javaDir = join(root, 'test', 'interop', 'java');
const jar = join(javaDir, 'target', 'trajflow-avro-interop.jar');
const BUILD_TIMEOUT_MS = 15 * 60_000; // a cold Maven build fetches avro and the plugins
const RUN_TIMEOUT_MS = 60_000;

/** Maven 3.8 writes colour resets even with -q -B -Dstyle.color=never. */
function stripAnsi(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, '');
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command, collecting its output (and echoing it to our stderr when `stream` is set). */
function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs: number; stream?: boolean }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // Maven prints its [ERROR] lines on stdout: with `stream`, both go to our stderr as they come.
    const echo = (d: string): void => {
      const clean = stripAnsi(d);
      if (opts.stream && clean.trim() !== '') process.stderr.write(clean);
    };
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      echo(d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      echo(d);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== null) reject(new Error(`${cmd} ${args.join(' ')} killed by ${signal} (timeout ${opts.timeoutMs} ms)\n${stdout}${stderr}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** Builds the jar unless it is newer than pom.xml and every file under src/. */
async function buildJavaTool(): Promise<'built' | 'up to date'> {
  const sources = Math.max(newestMtime(join(javaDir, 'pom.xml')), newestMtime(join(javaDir, 'src')));
  if (existsSync(jar) && statSync(jar).mtimeMs > sources) return 'up to date';
  const mvn = await run('mvn', ['-q', '-B', '-Dstyle.color=never', 'package'], {
    cwd: javaDir,
    timeoutMs: BUILD_TIMEOUT_MS,
    stream: true,
  });
  if (mvn.code !== 0 || !existsSync(jar)) {
    throw new Error(`mvn package in ${javaDir} failed (exit ${mvn.code}):\n${stripAnsi(mvn.stdout)}${stripAnsi(mvn.stderr)}`);
  }
  return 'built';
}

/** Runs the Java tool; exit 2 means some events failed (their errors are in <outDir>/<event>.error). */
async function java(...args: string[]): Promise<void> {
  const r = await run('java', ['-jar', jar, ...args], { timeoutMs: RUN_TIMEOUT_MS });
  if (r.code !== 0 && r.code !== 2) {
    throw new Error(`java -jar ${jar} ${args.join(' ')} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  }
}

interface JavaSchemaVersion {
  version: number;
  canonical: string;
  fingerprintHex: string;
  fingerprintLeHex: string;
  headerHex: string;
}

interface JavaFingerprint extends JavaSchemaVersion {
  versions: JavaSchemaVersion[];
}

const registry = SchemaRegistry.fromSchemasDir();
const codec = new EventCodec(registry);
const events = Object.keys(sampleEvents).sort() as EventName[];

function schemaOf(event: EventName): Record<string, unknown> {
  return JSON.parse(registry.current(event).schema) as Record<string, unknown>;
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

let tmp = '';
let javaFingerprints: Record<string, JavaFingerprint> = {};
const dirs = { tsBin: '', tsJson: '', javaJson: '', javaBin: '', tsBinBad: '', javaJsonBad: '' };

before(async () => {
  const built = await buildJavaTool();
  process.stderr.write(`java avro tool: ${built}\n`);
  tmp = mkdtempSync(join(tmpdir(), 'trajflow-java-avro-'));
  for (const key of Object.keys(dirs) as (keyof typeof dirs)[]) {
    dirs[key] = join(tmp, key);
    mkdirSync(dirs[key]);
  }
  for (const event of events) {
    const value = sampleEvents[event];
    const bytes = codec.encode(event, value);
    writeFileSync(join(dirs.tsBin, `${event}.bin`), bytes);
    // The same message with one fingerprint byte flipped: Java must refuse it.
    const bad = Buffer.from(bytes);
    bad[2] = bad[2]! ^ 0xff;
    writeFileSync(join(dirs.tsBinBad, `${event}.bin`), bad);
    writeFileSync(join(dirs.tsJson, `${event}.json`), toJson(normalize(schemaOf(event), value)));
  }
  // Three JVMs side by side: each run is about half a second.
  await Promise.all([
    java('fingerprints', schemasDir, join(tmp, 'fingerprints.json')),
    java('decode', schemasDir, dirs.tsBin, dirs.javaJson),
    java('encode', schemasDir, dirs.tsJson, dirs.javaBin),
    java('decode', schemasDir, dirs.tsBinBad, dirs.javaJsonBad),
  ]);
  const fp = JSON.parse(readFileSync(join(tmp, 'fingerprints.json'), 'utf8')) as {
    avroVersion: string | null;
    events: Record<string, JavaFingerprint>;
  };
  process.stderr.write(`apache avro (java) ${fp.avroVersion}\n`);
  javaFingerprints = fp.events;
});

after(() => {
  if (tmp !== '' && process.env['TRAJFLOW_KEEP_INTEROP_TMP'] === undefined) rmSync(tmp, { recursive: true, force: true });
  else if (tmp !== '') process.stderr.write(`interop files kept in ${tmp}\n`);
});

test('every schema directory has a fixture, and every fixture a schema', () => {
  const onDisk = readdirSync(schemasDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && readdirSync(join(schemasDir, d.name)).some((f) => /^v\d+\.avsc$/.test(f)))
    .map((d) => d.name)
    .sort();
  assert.deepEqual(events, onDisk);
  assert.deepEqual([...new Set(registry.entries().map((e) => e.event))].sort(), onDisk);
  assert.deepEqual(Object.keys(javaFingerprints).sort(), onDisk);
});

function hexOf(fingerprint: unknown): string {
  if (typeof fingerprint === 'bigint') return fingerprint.toString(16).padStart(16, '0');
  if (typeof fingerprint === 'string') return fingerprint.toLowerCase();
  if (fingerprint instanceof Uint8Array) {
    // 8 bytes as written in the header: little-endian.
    return Buffer.from(fingerprint).reverse().toString('hex');
  }
  throw new Error(`unexpected fingerprint ${String(fingerprint)}`);
}

for (const event of events) {
  describe(event, () => {
    test('fingerprint and canonical form match Java (SchemaNormalization)', () => {
      const j = javaFingerprints[event];
      const entry = registry.current(event);
      assert.ok(j, `Java found no schema for ${event}`);
      assert.equal(entry.version, j.version, 'current version');
      assert.equal(entry.canonical, j.canonical, 'Parsing Canonical Form');
      assert.equal(entry.fingerprintHex.toLowerCase(), j.fingerprintHex, 'registry fingerprintHex vs parsingFingerprint64');
      assert.equal(hexOf(codec.fingerprintOf(event)), j.fingerprintHex, 'codec.fingerprintOf vs parsingFingerprint64');
      assert.equal(entry.header.toString('hex'), j.headerHex, 'registry header (C3 01 + fingerprint LE)');
      const bytes = codec.encode(event, sampleEvents[event]);
      assert.equal(bytes.subarray(0, 10).toString('hex'), j.headerHex, 'single-object header of an encoded event');
      // Older versions too, when there are any.
      for (const v of j.versions) {
        const older = registry.entries().find((e) => e.event === event && e.version === v.version);
        assert.ok(older, `${event} v${v.version} is not in the registry`);
        assert.equal(older.canonical, v.canonical, `v${v.version} Parsing Canonical Form`);
        assert.equal(older.fingerprintHex, v.fingerprintHex, `v${v.version} fingerprint`);
      }
    });

    test('trajflow → Java: BinaryMessageDecoder reads what EventCodec wrote', () => {
      const error = readIfExists(join(dirs.javaJson, `${event}.error`));
      assert.equal(error, undefined, `Java could not decode trajflow's ${event}:\n${error}`);
      const fromJava = parseJson(readFileSync(join(dirs.javaJson, `${event}.json`), 'utf8'));
      const expected = normalize(schemaOf(event), sampleEvents[event]);
      assert.deepStrictEqual(fromJava, expected);
    });

    test('Java → trajflow: EventCodec reads what BinaryMessageEncoder wrote', () => {
      const error = readIfExists(join(dirs.javaBin, `${event}.error`));
      assert.equal(error, undefined, `Java could not encode ${event}:\n${error}`);
      const javaBytes = readFileSync(join(dirs.javaBin, `${event}.bin`));
      const decoded = codec.decode(event, javaBytes);
      const schema = schemaOf(event);
      const expected = normalize(schema, sampleEvents[event]) as { [key: string]: Normalized };
      const got = normalize(schema, decoded) as { [key: string]: Normalized };
      // Field by field first, for a readable failure; then the whole record.
      for (const field of Object.keys(expected)) {
        assert.deepStrictEqual(got[field], expected[field], `field ${field}`);
      }
      assert.deepStrictEqual(got, expected);
      // Byte for byte: for the same datum (maps in the same entry order as Java wrote them, which
      // is what decode gives back) EventCodec writes exactly Java's bytes.
      const reencoded = codec.encode(event, decoded);
      assert.equal(reencoded.toString('hex'), javaBytes.toString('hex'), 'EventCodec bytes vs BinaryMessageEncoder bytes');
    });

    test('Java refuses a trajflow message whose fingerprint was changed', () => {
      const error = readIfExists(join(dirs.javaJsonBad, `${event}.error`));
      assert.ok(error !== undefined, 'Java decoded a message with an unknown fingerprint');
      assert.match(error, /MissingSchemaException|Cannot resolve schema for fingerprint/);
    });
  });
}

test('EventCodec rejects a Java-written message with a flipped fingerprint byte: unknown-fingerprint', () => {
  for (const event of events) {
    const bytes = Buffer.from(readFileSync(join(dirs.javaBin, `${event}.bin`)));
    bytes[5] = bytes[5]! ^ 0x01;
    assert.throws(
      () => codec.decode(event, bytes),
      (e: unknown) => {
        assert.equal((e as { reason?: unknown }).reason, 'unknown-fingerprint', `${event}: ${String(e)}`);
        return true;
      },
    );
  }
});
