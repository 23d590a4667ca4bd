// The body of POST /v1/replay, read strictly: every field is known or the request is a 400 naming it, so a
// misspelt setting can never start a replay with the defaults in its place (it did: `{"processing":
// {"estimator": "grpo"}}`, the body the guides show, was ignored whole, and an unknown estimator got a 202).
//
//   { "selection": {...},            the fields of `trajflow replay` (learner/replay/select.ts checks them)
//     "processing"?: {
//       "estimator"?: "grpo" | {"name": "grpo", "options"?: {...}},
//       "reward"?, "filters"?, "maxContextTokens"?, "ks"?,      as in `trajflow replay --processing <file>`
//       "processing"?: {"reward"?, "estimator"?, "filters"?, …}, the same settings nested (either form, not both)
//       "minGroupSize"?, "completeGroups"?, "batchGroups"?, "intoRunId"? } }
//
// The values are then checked by learner/replay's buildSelection and buildReplayProcessing (types, ranges,
// reward terms, filter names), whose ConfigError the route turns into a 400.
import { HttpProblem, problemTypes } from '../core/problem.js';
import type { ReplayProcessingInput } from '../learner/replay/run-replay.js';
import type { ReplaySelectionInput } from '../learner/replay/select.js';
import { estimatorNames } from '../processors/advantages/registry.js';
import type { ProcessingConfig } from '../processors/pipeline/process-batch.js';

/** The processing settings of a replay, as the body gives them (the estimator may be just its name). */
export const PROCESSING_SETTINGS = ['reward', 'estimator', 'filters', 'maxContextTokens', 'ks'] as const;
/** The other fields of `processing`. */
export const REPLAY_OPTIONS = ['minGroupSize', 'completeGroups', 'batchGroups', 'intoRunId'] as const;

/** An estimator as the body may give it: its name, or {"name", "options"?}. */
type EstimatorBody = string | ProcessingConfig['estimator'];
/** The processing settings as the body gives them. */
export type ProcessingSettingsBody = Partial<Omit<ProcessingConfig, 'estimator' | 'tokenizer'>> & { readonly estimator?: EstimatorBody };
/** `processing` of the body: the settings (flat, or nested in `processing`) and the replay's options. */
export type ReplayProcessingBody = ProcessingSettingsBody & Omit<ReplayProcessingInput, 'replayId' | 'processing'> & { readonly processing?: ProcessingSettingsBody };

export interface ReplayBody {
  readonly selection: ReplaySelectionInput;
  /** Without replayId: the server names the replay. */
  readonly processing: Omit<ReplayProcessingInput, 'replayId'>;
}

const USAGE = 'send {"selection": {"runId": "…", …}, "processing"?: {"estimator"?: "grpo", …}}';

function bad(field: string, detail: string): HttpProblem {
  return new HttpProblem(problemTypes.invalidBody, `${field}: ${detail}`, { field });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every key of `value` is in `known`; else a 400 naming the unknown ones (the first as `field`). */
function onlyKnown(value: Record<string, unknown>, known: readonly string[], at: string, hint = ''): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const path = (key: string) => (at === '' ? key : `${at}.${key}`);
  throw new HttpProblem(
    problemTypes.invalidBody,
    `unknown field${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => JSON.stringify(path(key))).join(', ')}${hint}; ${at === '' ? 'the body' : at} takes ${known.join(', ')}`,
    { field: path(unknown[0]!) },
  );
}

/** `"grpo"` or `{"name": "grpo", "options"?: {...}}`, a known estimator; else a 400 listing the estimators. */
function estimator(value: unknown, at: string): ProcessingConfig['estimator'] {
  const spec = typeof value === 'string' ? { name: value } : value;
  if (!isObject(spec)) throw bad(at, `must be an estimator name or {"name": …, "options"?: {…}}; use one of ${estimatorNames.join(', ')}`);
  onlyKnown(spec, ['name', 'options'], at);
  if (typeof spec.name !== 'string' || !(estimatorNames as readonly string[]).includes(spec.name)) {
    throw bad(typeof value === 'string' ? at : `${at}.name`, `unknown estimator ${JSON.stringify(spec.name)}; use one of ${estimatorNames.join(', ')}`);
  }
  if (spec.options !== undefined && !isObject(spec.options)) throw bad(`${at}.options`, 'must be an object');
  return spec as unknown as ProcessingConfig['estimator'];
}

/** Reward, estimator, filters, maxContextTokens, ks: known keys; the estimator and each filter's keys checked here, the rest by buildReplayProcessing. */
function settings(value: Record<string, unknown>, at: string): Partial<ProcessingConfig> {
  const out: Record<string, unknown> = {};
  for (const key of PROCESSING_SETTINGS) if (value[key] !== undefined) out[key] = value[key];
  if (value.estimator !== undefined) out.estimator = estimator(value.estimator, `${at}.estimator`);
  if (Array.isArray(value.filters)) {
    value.filters.forEach((filter, i) => {
      if (isObject(filter)) onlyKnown(filter, ['name', 'options'], `${at}.filters[${i}]`);
    });
  }
  return out as Partial<ProcessingConfig>;
}

function processingOf(value: unknown): Omit<ReplayProcessingInput, 'replayId'> {
  if (value === undefined) return {};
  if (!isObject(value)) throw bad('processing', 'must be an object');
  onlyKnown(value, ['processing', ...PROCESSING_SETTINGS, ...REPLAY_OPTIONS], 'processing', Object.hasOwn(value, 'replayId') ? ' (the server names the replay)' : '');
  const flat = PROCESSING_SETTINGS.filter((key) => value[key] !== undefined);
  let config: Partial<ProcessingConfig> | undefined;
  if (value.processing !== undefined) {
    if (!isObject(value.processing)) throw bad('processing.processing', 'must be an object');
    if (flat.length > 0) throw bad(`processing.${flat[0]}`, 'give the processing settings either in "processing" or nested in "processing.processing", not both');
    onlyKnown(value.processing, PROCESSING_SETTINGS, 'processing.processing');
    config = settings(value.processing, 'processing.processing');
  } else if (flat.length > 0) {
    config = settings(value, 'processing');
  }
  const options: Record<string, unknown> = {};
  for (const key of REPLAY_OPTIONS) if (value[key] !== undefined) options[key] = value[key];
  return { ...(config === undefined ? {} : { processing: config }), ...options } as Omit<ReplayProcessingInput, 'replayId'>;
}

/** Checks the shape and the names of the body; throws the 400 HttpProblem naming the field. */
export function parseReplayBody(json: unknown): ReplayBody {
  if (!isObject(json)) throw new HttpProblem(problemTypes.invalidBody, `the body must be a JSON object: ${USAGE}`);
  onlyKnown(json, ['selection', 'processing'], '');
  if (!isObject(json.selection))
    throw new HttpProblem(problemTypes.invalidBody, `selection: ${json.selection === undefined ? 'is missing' : 'must be an object'}; ${USAGE}`, { field: 'selection' });
  return { selection: json.selection as ReplaySelectionInput, processing: processingOf(json.processing) };
}
