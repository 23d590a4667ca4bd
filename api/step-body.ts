// What POST /v1/steps accepts, in two pure phases so the route can rate-limit between them:
//   1. parseStepsBody: the raw bytes → a list of candidate steps (JSON values, or one Avro payload), which
//      says how many steps the request carries (the rate limiter's count) without checking them yet;
//   2. checkSteps: every candidate → a StepEvent that fits the Avro schema (it is encoded once, so the
//      publisher cannot fail half-way through a batch) and passes validateIngestStep: validateEvent (the
//      StepPublisher's and the consumers' rules) and ids of the read API's grammar (schemas/ids.ts).
// A rejection names the field (and, in a batch, the index of the step) and carries the dead-letter reason.
import { DecodeError, InvalidEventError, OversizeEventError, type EventCodec, type StepEvent } from '../schemas/index.js';
import { validateIngestStep } from '../schemas/validate.js';
import { problemTypes, type ProblemType } from '../core/problem.js';
import { stepFromJson } from './step-json.js';
import { parseStrictJson } from './strict-json.js';

export const JSON_TYPE = 'application/json';
export const AVRO_TYPE = 'application/vnd.trajflow.avro';

export type BodyKind = 'json' | 'avro';

export interface StepRejection {
  readonly type: ProblemType;
  readonly detail: string;
  /** Dead-letter reason code (bad-json, duplicate-key, unknown-field, invalid-value, or the codec's DecodeFailure). */
  readonly reason: string;
  /** The bad field, as a path inside the step (`actionLogProbs[3]`), when there is one. */
  readonly field?: string;
  /** Index of the bad step in a batch body. */
  readonly index?: number;
}

export interface ParsedSteps {
  readonly kind: BodyKind;
  /** True for `{ "steps": [...] }`: errors then name the step's index. */
  readonly batch: boolean;
  /** Parsed JSON values, or the one Avro payload. */
  readonly candidates: readonly unknown[];
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly rejection: StepRejection };

const reject = (rejection: StepRejection): { ok: false; rejection: StepRejection } => ({ ok: false, rejection });

/** Phase 1: bytes → candidates. Over `maxSteps` candidates is a 413 (not the body's fault per se). */
export function parseStepsBody(kind: BodyKind, raw: Buffer, maxSteps: number): Parsed<ParsedSteps> {
  if (raw.length === 0) {
    return reject({ type: problemTypes.invalidBody, reason: 'empty-payload', detail: 'the body is empty: send one step, {"steps": [...]}, or one Avro single-object step event' });
  }
  if (kind === 'avro') return { ok: true, value: { kind, batch: false, candidates: [raw] } };
  // UTF-8 only (invalid bytes are not replaced) and no key twice: strict-json.ts says why.
  const parsedJson = parseStrictJson(raw);
  if (!parsedJson.ok) {
    return reject({ type: problemTypes.invalidBody, reason: parsedJson.reason, detail: parsedJson.detail, ...(parsedJson.field === undefined ? {} : { field: parsedJson.field }) });
  }
  const json = parsedJson.value;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return reject({
      type: problemTypes.invalidBody,
      reason: 'invalid-value',
      detail: `the body must be a JSON object (one step, or {"steps": [...]}), got ${Array.isArray(json) ? 'an array' : typeof json === 'object' ? 'null' : `a ${typeof json}`}`,
    });
  }
  if (!Object.hasOwn(json, 'steps')) return { ok: true, value: { kind, batch: false, candidates: [json] } };
  const extra = Object.keys(json).find((key) => key !== 'steps');
  if (extra !== undefined) {
    return reject({
      type: problemTypes.invalidBody,
      reason: 'unknown-field',
      field: extra,
      detail: `'${extra}' is not allowed next to 'steps': a batch body is {"steps": [...]} and nothing else`,
    });
  }
  const steps = (json as { steps: unknown }).steps;
  if (!Array.isArray(steps)) return reject({ type: problemTypes.invalidBody, reason: 'invalid-value', field: 'steps', detail: "'steps' must be an array of step objects" });
  if (steps.length === 0) return reject({ type: problemTypes.invalidBody, reason: 'invalid-value', field: 'steps', detail: "'steps' is empty: send at least one step" });
  if (steps.length > maxSteps) {
    return reject({
      type: problemTypes.tooLarge,
      reason: 'oversize',
      field: 'steps',
      detail: `the batch has ${steps.length} steps, more than the ${maxSteps} allowed per request: split it`,
    });
  }
  return { ok: true, value: { kind, batch: true, candidates: steps } };
}

/** Phase 2: candidates → valid StepEvents, all or nothing. */
export function checkSteps(parsed: ParsedSteps, codec: EventCodec): Parsed<StepEvent[]> {
  const steps: StepEvent[] = [];
  for (const [i, candidate] of parsed.candidates.entries()) {
    const at = parsed.batch ? { index: i } : {};
    const where = parsed.batch ? `steps[${i}].` : '';
    let step: StepEvent;
    if (parsed.kind === 'avro') {
      try {
        step = codec.decode('step', candidate as Buffer);
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        return reject({ type: problemTypes.invalidBody, reason: error.reason, detail: `the body is not a readable step event (${error.reason}): ${error.message}` });
      }
    } else {
      const converted = stepFromJson(candidate);
      if (!converted.ok) {
        return reject({
          type: problemTypes.invalidStep,
          reason: converted.unknownField ? 'unknown-field' : 'invalid-value',
          ...(converted.field === '' ? {} : { field: converted.field }),
          ...at,
          detail: converted.field === '' ? `${where || 'the body: '}${converted.message}` : `${where}${converted.field} ${converted.message}`,
        });
      }
      step = converted.value;
    }
    // validateEvent's rules plus the read API's id grammar: whatever is accepted here can be read back.
    const check = validateIngestStep(step);
    if (!check.ok) {
      return reject({ type: problemTypes.invalidStep, reason: 'invalid-value', field: check.field, ...at, detail: `${where}${check.field}: ${check.message}` });
    }
    try {
      // Encoding proves the step fits the schema (int ranges, float arrays) and the size limit, so
      // publishAll cannot throw after some of the batch was queued. The bytes are thrown away.
      codec.encode('step', step);
    } catch (error) {
      if (error instanceof InvalidEventError) {
        return reject({ type: problemTypes.invalidStep, reason: 'invalid-value', field: error.field, ...at, detail: `${where}${error.message}` });
      }
      if (error instanceof OversizeEventError) {
        return reject({
          type: problemTypes.tooLarge,
          reason: 'oversize',
          ...at,
          detail: `${where.replace(/\.$/, '') || 'the step'} is ${error.bytes} bytes encoded, over the ${error.limit}-byte event limit`,
        });
      }
      throw error;
    }
    steps.push(step);
  }
  return { ok: true, value: steps };
}
