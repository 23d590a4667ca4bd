// The two foreign Avro decoders the interop tests read trajflow's bytes with: Apache Avro's Java library
// (test/interop/java, a Maven project built into one shaded jar on first use, and again whenever its sources
// or pom are newer than the jar) and Python's avro (Debian's python3-avro, installed on first use, driven by
// test/interop/python/decode_steps.py). decodeStepLines runs each once over a whole batch of messages.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SchemaRegistry } from '../../schemas/index.js';
import { ensureDebianPackages } from '../examples/debian-packages.js';
import { type Normalized, parseJson } from './avro-normalize.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const schemasDir = join(root, 'schemas');
const javaDir = join(root, 'test', 'interop', 'java');
export const jar = join(javaDir, 'target', 'trajflow-avro-interop.jar');
export const PYTHON = '/usr/bin/python3';
export const pythonDecoder = join(root, 'test', 'interop', 'python', 'decode_steps.py');

export function run(cmd: string, args: string[], cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${cmd}: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function newest(path: string): number {
  const stat = statSync(path);
  return stat.isDirectory() ? Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry)))) : stat.mtimeMs;
}

/** Builds the Java tool when it is missing or older than its sources; installs Python's avro when missing. */
export async function ensureDecoders(): Promise<void> {
  if (!existsSync(jar) || statSync(jar).mtimeMs < Math.max(newest(join(javaDir, 'pom.xml')), newest(join(javaDir, 'src')))) {
    const mvn = await run('mvn', ['-q', '-B', '-Dstyle.color=never', 'package'], javaDir, 15 * 60_000);
    assert.equal(mvn.code, 0, `mvn package in ${javaDir} failed:\n${mvn.output}`);
  }
  await ensureDebianPackages(PYTHON, ['avro.schema', 'avro.io'], ['python3-avro'], 10 * 60_000);
}

/** One message as a decoder read it: its normalized value (avro-normalize.ts), or why it could not be read. */
export type Decoded = { readonly value: Normalized } | { readonly error: string };

function readLines(path: string, expected: number, who: string): Decoded[] {
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  assert.equal(lines.length, expected, `${who} wrote one line per message`);
  return lines.map((line) => {
    const parsed = parseJson(line) as { value?: Normalized; error?: string };
    return parsed.error !== undefined ? { error: parsed.error } : { value: parsed.value ?? null };
  });
}

/**
 * Decodes single-object encoded step messages with Java (one JVM) and Python (one process), in `dir`: each
 * gives one result per message, in order.
 */
export async function decodeStepLines(registry: SchemaRegistry, messages: readonly Buffer[], dir: string): Promise<{ java: Decoded[]; python: Decoded[] }> {
  const input = join(dir, 'steps.hex');
  writeFileSync(input, messages.map((m) => `${m.toString('hex')}\n`).join(''));
  const entry = registry.current('step');
  const [java, python] = await Promise.all([
    run('java', ['-jar', jar, 'decode-lines', schemasDir, 'step', input, join(dir, 'java.jsonl')], root, 300_000),
    run(PYTHON, [pythonDecoder, 'lines', join(schemasDir, 'step', `v${entry.version}.avsc`), entry.header.toString('hex'), input, join(dir, 'python.jsonl')], root, 300_000),
  ]);
  assert.equal(java.code, 0, `java decode-lines failed:\n${java.output}`);
  assert.equal(python.code, 0, `python decode failed:\n${python.output}`);
  return { java: readLines(join(dir, 'java.jsonl'), messages.length, 'Java'), python: readLines(join(dir, 'python.jsonl'), messages.length, 'Python') };
}
