// Interoperability of what the validators accept: generated step events (the odd ones of
// test/schemas/validate-properties.unit.spec.ts: astral characters, NUL, long strings, -0, subnormal and
// extreme float32 log-probs, avsc's largest long …) that validateIngestStep accepts are encoded by EventCodec
// and decoded by Apache Avro's Java implementation (BinaryMessageDecoder, test/interop/java), which must read
// exactly the values that were validated. The Java tool decodes one `step.bin` per run, so each event gets its
// own directory and JVM (≈ 0.5 s each, two at a time); the tool is built on first use like
// java-avro.int.spec.ts builds it. The same files are decoded by Python's avro (Debian's python3-avro, installed
// on first use like the Python example's packages), as a Python consumer of the topic would read them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { validateIngestStep } from '../../schemas/validate.js';
import { oddStep } from '../schemas/odd-steps.js';
import { normalize, parseJson } from './avro-normalize.js';
import { ensureDecoders, jar, PYTHON, pythonDecoder, root, run, schemasDir } from './decoders.js';

const GENERATED = 16;

const registry = SchemaRegistry.fromSchemasDir();
const codec = new EventCodec(registry);
const stepSchema = JSON.parse(registry.current('step').schema) as Record<string, unknown>;

/** One step that is accepted and sits on every edge at once. */
const EDGES: StepEvent = {
  eventId: `e${'v'.repeat(255)}`,
  runId: 'run-7:a.b_c/d',
  envName: 'Env \uD83D\uDE00 \u{10FFFF}',
  envVersion: 'v\u0000NUL',
  groupId: 'run-7/g12',
  episodeId: 'run-7/g12/e3',
  stepIndex: 2 ** 31 - 1,
  observation: `${'é'.repeat(3000)}\uFEFF\uFFFD`,
  observationTokenIds: [0, 2 ** 31 - 1],
  action: '<answer>\u0000</answer>',
  actionTokenIds: [1, 2, 3, 4, 5],
  actionLogProbs: [-0, -(2 ** -149), -3.4028234663852886e38, -1e-300, Math.fround(-0.1)],
  policyVersion: 2 ** 53 - 2,
  reward: -0,
  terminated: true,
  truncated: true,
  actionValid: false,
  stateKey: '\uD83D\uDE00',
  metrics: { nan: Number.NaN, inf: Infinity, '-inf': -Infinity, tiny: Number.MIN_VALUE, '\u0000': -0 },
  info: { '\uD83D\uDE00': '\u0000', '': '' },
  eventTimeMs: 253_402_300_799_999,
};

let tmp = '';
const steps: StepEvent[] = [];

before(async () => {
  await ensureDecoders();
  tmp = mkdtempSync(join(tmpdir(), 'trajflow-generated-steps-'));
  // A fixed seed: the same events every run, so a failure reproduces.
  const accepted = fc.sample(
    oddStep.filter((step) => validateIngestStep(step).ok),
    { numRuns: GENERATED, seed: 20261202 },
  );
  steps.push(EDGES, ...accepted);
  assert.deepEqual(validateIngestStep(EDGES), { ok: true });
  for (const [i, step] of steps.entries()) {
    mkdirSync(join(tmp, `in-${i}`));
    writeFileSync(join(tmp, `in-${i}`, 'step.bin'), codec.encode('step', step));
  }
  const entry = registry.current('step');
  const python = await run(PYTHON, [pythonDecoder, join(schemasDir, 'step', `v${entry.version}.avsc`), entry.header.toString('hex'), tmp, String(steps.length)], root, 120_000);
  assert.equal(python.code, 0, `python decode failed:\n${python.output}`);
  // Two JVMs at a time (a 2-core machine).
  for (let i = 0; i < steps.length; i += 2) {
    await Promise.all(
      [i, i + 1]
        .filter((j) => j < steps.length)
        .map(async (j) => {
          const java = await run('java', ['-jar', jar, 'decode', schemasDir, join(tmp, `in-${j}`), join(tmp, `out-${j}`)], root, 60_000);
          if (java.code !== 0 && java.code !== 2) throw new Error(`java decode failed (exit ${java.code}):\n${java.output}`);
        }),
    );
  }
});

after(() => {
  if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
});

test('Apache Avro (Java) decodes every accepted generated step to the values that were validated', () => {
  assert.equal(steps.length, GENERATED + 1);
  for (const [i, step] of steps.entries()) {
    const error = join(tmp, `out-${i}`, 'step.error');
    assert.ok(!existsSync(error), `Java could not decode step ${i}:\n${existsSync(error) ? readFileSync(error, 'utf8') : ''}`);
    const fromJava = parseJson(readFileSync(join(tmp, `out-${i}`, 'step.json'), 'utf8'));
    assert.deepStrictEqual(fromJava, normalize(stepSchema, step), `step ${i}`);
  }
});

test("Python's avro decodes every accepted generated step to the values that were validated", () => {
  assert.equal(steps.length, GENERATED + 1);
  for (const [i, step] of steps.entries()) {
    const error = join(tmp, `py-${i}`, 'step.error');
    assert.ok(!existsSync(error), `Python could not decode step ${i}:\n${existsSync(error) ? readFileSync(error, 'utf8') : ''}`);
    const fromPython = parseJson(readFileSync(join(tmp, `py-${i}`, 'step.json'), 'utf8'));
    assert.deepStrictEqual(fromPython, normalize(stepSchema, step), `step ${i}`);
  }
});
