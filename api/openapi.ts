// The OpenAPI 3.1 document of the HTTP API, served at GET /openapi.json; docs/reference/http-api.md is
// generated from it (node --import tsx scripts/docs-openapi.mjs). It is written by hand where the handlers
// are, but takes from the code whatever is cheap to take, so that the two cannot drift apart unnoticed:
//   * the step body from the current schemas/step/vN.avsc (what the codec accepts, field docs included),
//     tightened with validateEvent's rules and the JSON reader's defaults (step-json.ts);
//   * response objects through shape<T>(), whose keys the compiler checks against the read model's types;
//   * limits, defaults, enumerations and id patterns from the modules that check them (storage/query/*);
//   * the problem types, and the example problem bodies, from core/problem.ts.
// test/api/openapi.unit.spec.ts validates the served document with swagger-parser, compares its paths ×
// methods with the routes the express app registers (both ways), each operation's query parameters with
// the handler's allow-list, its `security` with what the server answers without a token, and the JSON
// responses of a running app with the schemas here.
//
// Not in the document: the web dashboard (GET /, /index.html, /static/*, /vendor/uplot/*, web/router.ts).
// It serves a page and its files, not data; nothing but a browser is meant to call it, and the page itself
// reads the /v1 endpoints below. HEAD, which express answers for every GET, is stated once in the
// description instead of per path; the 405 of a path with a fallback for other methods is on each of its
// operations.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import express, { type Router } from 'express';
import { problem, problemTypes, problemTypeUri, type ProblemType } from '../core/problem.js';
import type { StepEvent } from '../schemas/index.js';
import { latestSchemaFiles } from '../schemas/files.js';
import { FLOAT32_MAX, LONG_MAX } from '../schemas/validate.js';
import { estimatorNames } from '../processors/advantages/registry.js';
import { filterNames } from '../processors/filters/registry.js';
import type { DroppedReplayGroup, ReplayReport } from '../learner/replay/run-replay.js';
import { FETCH_MODES, REPLAY_SOURCES, type ReplaySelection, type UnavailableTrajectory } from '../learner/replay/select.js';
import { ALERTS_DEFAULT_LIMIT, type AlertsQuery, type AlertView } from '../storage/query/alerts.js';
import { CURVE_DEFAULT_LIMIT, MAX_BUCKET_MS, MIN_BUCKET_MS, type CurvePoint, type CurveResult, type SeriesQuery } from '../storage/query/curve.js';
import {
  DEFAULT_LIMIT as DEAD_LETTERS_DEFAULT_LIMIT,
  DEFAULT_WINDOW_MS as DEAD_LETTERS_DEFAULT_WINDOW_MS,
  MAX_LIMIT as DEAD_LETTERS_MAX_LIMIT,
  MAX_WINDOW_MS as DEAD_LETTERS_MAX_WINDOW_MS,
  PAYLOAD_PREVIEW_BYTES,
  type DeadLetterQuery,
  type DeadLetterView,
} from '../storage/query/dead-letters.js';
import type { EpisodeOutcomes, EpisodeOutcomesQuery } from '../storage/query/episode-outcomes.js';
import { EVALUATIONS_DEFAULT_LIMIT, type EvaluationsQuery, type EvaluationView } from '../storage/query/evaluations.js';
import { EVENT_TYPES } from '../storage/query/events.js';
import { GROUP_PATTERN, MAX_LAG_GROUPS, PROJECT_GROUPS, type GroupLag, type LagQuery, type LagReport, type PartitionLag, type TopicLag } from '../storage/query/lag.js';
import { LEARNER_METRICS_DEFAULT_LIMIT, type LearnerMetricsQuery, type LearnerMetricsView } from '../storage/query/learner-metrics.js';
import { CLOCK_SKEW_MS, DAY_MS, ID_PATTERN, MAX_ROWS, MAX_TIME_MS, RUN_WINDOW, type WindowLimits } from '../storage/query/params.js';
import type { PassAtKResult, PassPoint } from '../storage/query/pass-at-k.js';
import { ROLLOUT_STATS_DEFAULT_LIMIT, type RolloutStatsQuery, type RolloutStatsView } from '../storage/query/rollout-stats.js';
import { RUNS_DEFAULT_LIMIT, RUNS_DEFAULT_WINDOW_MS, RUNS_MAX_IDS, RUNS_MAX_WINDOW_MS, type RunsQuery, type RunView } from '../storage/query/runs.js';
import {
  MAX_EPISODE_STEPS,
  TRAJECTORIES_DEFAULT_LIMIT,
  type EpisodeView,
  type SampleTokens,
  type SampleView,
  type StepView,
  type TrajectoriesQuery,
  type TrajectoryView,
  type TurnSpan,
} from '../storage/query/trajectories.js';
import { defaultApiConfig, DEFAULT_API_PORT } from './config.js';
import { methodNotAllowed } from './error-handler.js';
import { hostNotAllowed } from './host-check.js';
import type { HealthStatus, ProbeResult } from './health-route.js';
import type { ProcessingSettingsBody, ReplayProcessingBody } from './replay-body.js';
import { REPLAY_BODY_LIMIT } from './replay-route.js';
import { AVRO_TYPE, JSON_TYPE } from './step-body.js';
import type { IngestStats } from './steps-route.js';
import type { TokenText } from './token-text.js';

// ------------------------------------------------------------------------------------------------ types

/** A JSON Schema (2020-12, OpenAPI 3.1's dialect) or any other JSON object of the document. */
export type Json = { readonly [key: string]: unknown };

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly description: string;
  readonly schema: Json;
  readonly style?: 'form' | 'simple';
  readonly explode?: boolean;
  readonly example?: unknown;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** [] = open; [{bearerAuth}] = a token whenever the server has tokens; [{bearerAuth}, {}] = a token unless on loopback. */
  readonly security: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
  readonly parameters?: ReadonlyArray<Parameter | Json>;
  readonly requestBody?: Json;
  readonly responses: Readonly<Record<string, Json>>;
}

export type Method = 'get' | 'post';
type PathItem = Partial<Record<Method, Operation>>;

export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: Json;
  readonly tags: readonly Json[];
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: {
    readonly securitySchemes: Readonly<Record<string, Json>>;
    readonly schemas: Readonly<Record<string, Json>>;
    readonly parameters: Readonly<Record<string, Parameter>>;
    readonly headers: Readonly<Record<string, Json>>;
    readonly responses: Readonly<Record<string, Json>>;
  };
}

/** Paths the app serves that are deliberately not in the document (the dashboard: see the top of the file). */
export const NON_API_PATHS: readonly string[] = ['/', '/index.html', '/static', '/vendor/uplot'];

// ---------------------------------------------------------------------------------------------- helpers

const str = (description?: string, extra: Json = {}): Json => ({ type: 'string', ...(description ? { description } : {}), ...extra });
const int = (description?: string, extra: Json = {}): Json => ({ type: 'integer', ...(description ? { description } : {}), ...extra });
const num = (description?: string, extra: Json = {}): Json => ({ type: 'number', ...(description ? { description } : {}), ...extra });
const bool = (description?: string): Json => ({ type: 'boolean', ...(description ? { description } : {}) });
const arrayOf = (items: Json, description?: string): Json => ({ type: 'array', items, ...(description ? { description } : {}) });
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const timeMs = (description = 'ms since the epoch'): Json => int(description);

/** The schema or null: a type list for plain types (enum gains null), anyOf otherwise ($ref, anyOf). */
function nullable(schema: Json): Json {
  if (typeof schema.type === 'string') {
    return { ...schema, type: [schema.type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
  }
  return { anyOf: [schema, { type: 'null' }] };
}

/** A JSON object with arbitrary keys, e.g. metrics by name. */
const mapOf = (values: Json, description?: string): Json => ({ type: 'object', additionalProperties: values, ...(description ? { description } : {}) });
const numbersByName = (description?: string): Json => mapOf(nullable(num()), description);

/**
 * An object schema for a type of the code: the compiler insists that `properties` names every key of T and
 * nothing else, so a field added to a view without a schema here fails `tsc`. Every key is required
 * (the handlers always send them, null when unknown) except those listed in `optional`.
 */
function shape<T>(
  properties: { readonly [K in keyof T]-?: Json },
  options: { readonly optional?: ReadonlyArray<keyof T & string>; readonly description?: string; readonly closed?: boolean } = {},
): Json {
  const optional = new Set<string>(options.optional ?? []);
  return {
    type: 'object',
    ...(options.description ? { description: options.description } : {}),
    properties,
    required: Object.keys(properties).filter((key) => !optional.has(key)),
    ...(options.closed ? { additionalProperties: false } : {}),
  };
}

const days = (ms: number): string => `${ms / DAY_MS} day${ms === DAY_MS ? '' : 's'}`;

// ---------------------------------------------------------------------------------- the step, from Avro

type AvroType = string | readonly AvroType[] | { readonly type: string; readonly items?: AvroType; readonly values?: AvroType; readonly logicalType?: string };
interface AvroField {
  readonly name: string;
  readonly type: AvroType;
  readonly doc?: string;
  readonly default?: unknown;
}

/**
 * An Avro type as the JSON the step reader (step-json.ts) accepts for it; `rule` adds validateEvent's
 * constraints to the innermost value (`items` for an array's elements). A ["null", T] union also takes
 * Avro's JSON union form {"<T>": value}, as the reader does. Types the step schema does not use throw, so
 * a schema change that needs a new mapping fails here (and in the tests) instead of being misdescribed.
 */
function fromAvro(type: AvroType, field: string, rule: Json = {}): Json {
  if (Array.isArray(type)) {
    const branches = type.filter((branch) => branch !== 'null');
    if (type.length !== 2 || branches.length !== 1) throw new Error(`openapi: step field ${field}: only ["null", T] unions are mapped`);
    const branch = branches[0] as AvroType;
    const inner = fromAvro(branch, field, rule);
    // Avro's JSON encoding names an unnamed branch by its type: {"array": [...]}, {"string": "..."}.
    const name = typeof branch === 'string' ? branch : (branch as { type: string }).type;
    return { anyOf: [{ type: 'null' }, inner, { type: 'object', properties: { [name]: inner }, required: [name], additionalProperties: false }] };
  }
  const t = type as Exclude<AvroType, readonly AvroType[]>;
  const name = typeof t === 'string' ? t : t.type;
  const { items: itemRule, ...own } = rule as { items?: Json };
  switch (name) {
    case 'string':
      return { type: 'string', ...own };
    case 'boolean':
      return { type: 'boolean', ...own };
    case 'int':
      return { type: 'integer', format: 'int32', minimum: -(2 ** 31), maximum: 2 ** 31 - 1, ...own };
    case 'long':
      // The reader takes safe integers only (JSON numbers are doubles).
      return { type: 'integer', format: 'int64', minimum: -LONG_MAX, maximum: LONG_MAX, ...own };
    case 'float':
      return { type: 'number', format: 'float', ...own };
    case 'double':
      return { type: 'number', format: 'double', ...own };
    case 'array':
      return { type: 'array', items: fromAvro((t as { items: AvroType }).items, `${field}[]`, itemRule ?? {}), ...own };
    case 'map':
      return { type: 'object', additionalProperties: fromAvro((t as { values: AvroType }).values, `${field}{}`), ...own };
    default:
      throw new Error(`openapi: step field ${field}: Avro type ${name} is not mapped`);
  }
}

/** validateEvent('step', …)'s rules (schemas/validate.ts), as JSON Schema. */
const STEP_ID: Json = { pattern: ID_PATTERN.source, maxLength: 256 };
const STEP_RULES: { readonly [K in keyof StepEvent]?: Json } = {
  // The read API's id grammar (schemas/ids.ts), checked at ingest (validateIngestStep): what is accepted can be read back.
  eventId: STEP_ID,
  runId: STEP_ID,
  envName: { minLength: 1 },
  envVersion: { minLength: 1 },
  groupId: STEP_ID,
  episodeId: STEP_ID,
  stepIndex: { minimum: 0 },
  observationTokenIds: { items: { minimum: 0 } },
  actionTokenIds: { items: { minimum: 0 } },
  // A float: at least the lowest float32 (below it, the wire would hold -Infinity).
  actionLogProbs: { items: { maximum: 0, minimum: -FLOAT32_MAX } },
  policyVersion: { minimum: 0 },
  stateKey: { minLength: 1 },
  eventTimeMs: { minimum: 1 },
};
/** Maps the JSON reader lets a client leave out (meaning {}), though the Avro schema has no default. */
const JSON_DEFAULTS: { readonly [K in keyof StepEvent]?: unknown } = { metrics: {}, info: {} };

function stepSchema(): Json {
  const file = latestSchemaFiles().find((f) => f.event === 'step');
  if (!file) throw new Error('openapi: no schemas/step/vN.avsc');
  const record = JSON.parse(readFileSync(file.path, 'utf8')) as { doc?: string; fields: AvroField[] };
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const field of record.fields) {
    const key = field.name as keyof StepEvent;
    const fallback = Object.hasOwn(field, 'default') ? field.default : JSON_DEFAULTS[key];
    properties[field.name] = {
      ...fromAvro(field.type, field.name, STEP_RULES[key]),
      ...(field.doc ? { description: field.doc } : {}),
      ...(fallback === undefined ? {} : { default: fallback }),
    };
    if (fallback === undefined) required.push(field.name);
  }
  return {
    type: 'object',
    description: `${record.doc ?? 'One step event.'} The fields of schemas/step/v${file.version}.avsc; unknown fields are refused (400, dead-lettered). Every string, map keys included, must be well-formed Unicode: a lone UTF-16 surrogate (JSON's "\\ud800" alone) is a 400 naming the field.`,
    properties,
    required,
    additionalProperties: false,
  };
}

/** A step that passes every check (what a client sends), for the examples. */
const EXAMPLE_STEP: StepEvent = {
  eventId: '3f1e8f0c-5b7a-4c61-9d2e-8a0b6c4d2e11',
  runId: 'frozenlake-s1',
  envName: 'FrozenLake',
  envVersion: 'v1',
  groupId: 'group-0',
  episodeId: 'episode-0',
  stepIndex: 0,
  observation: 'S F F F\nF H F H\nF F F H\nH F F G\nyou are at row 0, column 0',
  observationTokenIds: null,
  action: '<answer>Right</answer>',
  actionTokenIds: [17, 42, 18],
  actionLogProbs: [-0.01, -0.3, -0.02],
  policyVersion: 0,
  reward: 0,
  terminated: false,
  truncated: false,
  actionValid: true,
  stateKey: 'frozenlake-4x4:pos=0',
  metrics: { generationMs: 41.5 },
  info: { map: '4x4' },
  eventTimeMs: 1_767_225_600_000,
};

// ----------------------------------------------------------------------------------------- the schemas

// core/problem.ts' types and the API's own (host-check.ts).
const problemTypeList = [...Object.values(problemTypes), hostNotAllowed] as ProblemType[];
const HOST_REFUSED = `this server does not answer for Host "evil.example:${DEFAULT_API_PORT}": use http://127.0.0.1:${DEFAULT_API_PORT}, or add the name to TRAJFLOW_DASHBOARD_ALLOWED_HOSTS`;

const PROBLEM: Json = {
  type: 'object',
  description:
    'RFC 9457 problem details: the body of every error response (`application/problem+json`). `type` is a stable URN (not meant to be dereferenced) with a fixed `title` and `status`; `detail` says what was wrong in this request. Extension members carry what a program needs to react.',
  properties: {
    type: str(`urn:trajflow:problem:<slug>; one of the problem types below.`, { enum: problemTypeList.map(problemTypeUri) }),
    title: str('The fixed title of the type.'),
    status: int('The HTTP status, as in the response.', { minimum: 400, maximum: 599 }),
    detail: str('What was wrong with this request (never a stack trace or an internal message).'),
    field: str('The parameter, path parameter or body field at fault (a path inside a step for step errors: `actionLogProbs[3]`); the header (Host, Origin) for host-not-allowed.'),
    index: int('Index of the bad step in a batch body.', { minimum: 0 }),
    reason: str(
      "POST /v1/steps 400: the dead-letter reason code (bad-json — not JSON, or not UTF-8 —, duplicate-key, unknown-field, invalid-value, empty-payload, or the Avro decoder's failure).",
    ),
    deadLettered: bool('POST /v1/steps 400: whether the rejected body was written to the dead-letter topic.'),
    retryAfterSeconds: int('429: seconds until the token may publish this many steps (also in Retry-After).', { minimum: 1 }),
    limitBytes: int('413 from the body reader: the byte limit.'),
    errorId: str('500: the id under which the server log has the error.', { format: 'uuid' }),
    runIds: str('409: the runs (comma-separated, at most 5) the episode id is in.'),
  },
  required: ['type', 'title', 'status', 'detail'],
  additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
};

const probe = shape<ProbeResult>({ ok: bool(), ms: int('How long the probe took.', { minimum: 0 }), detail: str('What failed, for an operator.') }, { optional: ['detail'] });

const HEALTH = shape<{ status: HealthStatus; checks: { kafka: ProbeResult; clickhouse: ProbeResult }; ingest: IngestStats }>({
  status: str('ok; degraded = ClickHouse down (reads fail, ingest works); fail = Kafka down (ingest fails, 503).', { enum: ['ok', 'degraded', 'fail'] satisfies HealthStatus[] }),
  checks: shape<{ kafka: ProbeResult; clickhouse: ProbeResult }>({ kafka: probe, clickhouse: probe }),
  ingest: shape<IngestStats>(
    {
      acceptedSteps: int('Steps Kafka acknowledged since the server started.'),
      rejectedRequests: int('Requests to POST /v1/steps refused for their body (400, 413).'),
      deadLettered: int('Rejected bodies written to the dead-letter topic.'),
      publishFailures: int('Publishes Kafka did not acknowledge in time (503).'),
      lastPublishError: nullable(str()),
    },
    { description: 'Counters of POST /v1/steps since the server started.' },
  ),
});

const windowEcho = { sinceMs: timeMs('Inclusive.'), untilMs: timeMs('Exclusive.') };
const order = (fallback: 'asc' | 'desc'): Json => str(undefined, { enum: ['asc', 'desc'], default: fallback });
const seriesQuerySchema = shape<SeriesQuery>({ runId: str(), limit: int(), ...windowEcho, bucketMs: int() }, { optional: ['bucketMs'] });

const DEAD_LETTER = shape<DeadLetterView>({
  reason: str('Reason code, e.g. bad-marker, unknown-fingerprint, invalid-value.'),
  detail: str(),
  sourceTopic: str('The topic the record came from (`http:/v1/steps` for bodies POST /v1/steps refused).'),
  sourcePartition: int('-1 for HTTP bodies.'),
  sourceOffset: int('-1 for HTTP bodies.'),
  keyBase64: nullable(str(undefined, { contentEncoding: 'base64' })),
  payloadBytes: int('Full length of the payload.'),
  payloadBase64: str(`The first ${PAYLOAD_PREVIEW_BYTES} bytes of the payload.`, { contentEncoding: 'base64' }),
  payloadTruncated: bool(),
  eventTimeMs: timeMs('When the record was dead-lettered.'),
  deadLetterTopic: str(),
  deadLetterPartition: int(),
  deadLetterOffset: int(),
});

const RUN = shape<RunView>({
  runId: str(),
  envName: nullable(str('Null when only learner-side events were seen.')),
  envVersion: nullable(str()),
  firstEventTimeMs: timeMs(),
  lastEventTimeMs: timeMs(),
  stepEvents: int('Step rows stored (a duplicate counts until ClickHouse merges it).'),
  episodes: int('Episodes whose first step is stored.'),
  assembledEpisodes: int(),
  successfulEpisodes: int(),
  rolloutBatches: int(),
  learnerSteps: int(),
  latestPolicyVersion: nullable(int()),
});

const rolloutFigures = {
  groups: int(),
  trajectories: int(),
  rewardMean: nullable(num()),
  rewardStd: nullable(num()),
  meanInGroupRewardStd: nullable(num()),
  successRate: nullable(num()),
  passAtK: numbersByName('pass@k by k.'),
  passHatK: numbersByName('pass^k by k.'),
  meanLength: nullable(num()),
  invalidActionRate: nullable(num()),
  incomplete: int(),
  droppedGroups: int(),
};

const ROLLOUT_STATS = shape<RolloutStatsView>({
  ...rolloutFigures,
  runId: str(),
  scope: str('batch or group.'),
  batchId: str(),
  groupId: nullable(str('Null for a batch row.')),
  droppedByReason: numbersByName(),
  closedBy: numbersByName('Groups of the batch by the reason they closed (full, idle, timeout, evicted).'),
  eventTimeMs: timeMs(),
});

const CURVE_POINT = shape<CurvePoint>({
  ...rolloutFigures,
  timeMs: timeMs("The batch's event time, or the start of the bucket."),
  batchId: nullable(str('Null for a bucket.')),
  batches: int(),
  lastEventTimeMs: timeMs(),
  rewardLow: nullable(num('rewardMean − rewardStd.')),
  rewardHigh: nullable(num('rewardMean + rewardStd.')),
  envSteps: nullable(int()),
  cumulativeEnvSteps: nullable(int()),
  policyVersion: nullable(int("The newest policy version the learner had published by the point's newest batch (policy_versions); null before the first.")),
  closedFull: int('Groups closed with all their members.'),
  closedIdle: int('Groups closed after no member arrived for the idle time.'),
  closedTimeout: int('Groups closed by the group timeout, complete or not.'),
  closedEvicted: int('Groups evicted to bound the open groups.'),
});

const seriesPlan = {
  batches: int('Batches in the window.'),
  bucketMs: nullable(int('The bucket used (asked for or automatic); null: one point per batch.')),
  autoBucketed: bool(),
  envStepsBefore: nullable(int()),
};

/** How far the run had got by a row, as the curve counts it (cumulativeEnvSteps). */
const ENV_STEPS_AT = (row: string): string =>
  `Env steps of the run's rollout batches recorded at or before the ${row}, as the curve's cumulativeEnvSteps counts them; null before the first batch, and always null in GET /v1/events.`;

const LEARNER_STEP = shape<LearnerMetricsView>({
  step: int(),
  policyVersion: int(),
  totalLoss: nullable(num()),
  policyLoss: nullable(num()),
  klLoss: nullable(num()),
  entropyLoss: nullable(num()),
  entropy: nullable(num()),
  kl: nullable(num()),
  clipFraction: nullable(num()),
  clipFractionLow: nullable(num()),
  gradNormPreClip: nullable(num()),
  learningRate: nullable(num()),
  tokens: int(),
  samples: int(),
  stalenessMean: nullable(num()),
  stalenessMax: nullable(num()),
  durationMs: nullable(num()),
  backend: nullable(str()),
  metrics: numbersByName(),
  eventTimeMs: timeMs(),
  nonFinite: mapOf(str(), 'Fields whose value is NaN or infinite (null above), e.g. {"totalLoss": "nan"}.'),
  envSteps: nullable(int(ENV_STEPS_AT('step'))),
});

const ALERT = shape<AlertView>({
  alertId: str(),
  runId: str(),
  kind: str('Detector kind, e.g. entropy_collapse.'),
  severity: str('e.g. warning.'),
  learnerStep: int(),
  policyVersion: int(),
  value: nullable(num()),
  threshold: nullable(num()),
  message: str(),
  evidence: numbersByName(),
  eventTimeMs: timeMs(),
  envSteps: nullable(int(ENV_STEPS_AT('alert'))),
});

const EVALUATION = shape<EvaluationView>({
  runId: str(),
  policyVersion: int(),
  trainedIteration: int('-1: trained on no iteration.'),
  envSteps: int('-1: unknown.'),
  envName: str(),
  envOptions: str('JSON object, as text.'),
  tasks: int(),
  greedySuccess: nullable(num()),
  meanReward: nullable(num()),
  meanSteps: nullable(num()),
  randomSuccess: nullable(num()),
  durationMs: nullable(num()),
  eventTimeMs: timeMs(),
});

const TRAJECTORY = shape<TrajectoryView>({
  runId: str(),
  envName: str(),
  envVersion: str(),
  groupId: str(),
  episodeId: str(),
  outcome: str('terminated, truncated or incomplete.'),
  stepCount: int(),
  totalReward: nullable(num()),
  success: bool(),
  invalidActions: int(),
  gapCount: int(),
  minPolicyVersion: int(),
  maxPolicyVersion: int(),
  firstEventTimeMs: timeMs(),
  lastEventTimeMs: timeMs(),
  metrics: numbersByName(),
});

const turnSpan = shape<TurnSpan>({ observationStart: int(), actionStart: int(), end: int() });

const EPISODE = shape<EpisodeView & { tokenText: TokenText | null }>({
  runId: str(),
  episodeId: str(),
  trajectory: nullable(ref('Trajectory')),
  steps: arrayOf(
    shape<StepView>({
      eventId: str(),
      stepIndex: int(),
      observation: str(),
      observationTokenIds: nullable(arrayOf(int())),
      action: str(),
      actionTokenIds: arrayOf(int()),
      actionLogProbs: arrayOf(nullable(num())),
      policyVersion: int(),
      reward: nullable(num()),
      terminated: bool(),
      truncated: bool(),
      actionValid: bool(),
      stateKey: nullable(str()),
      metrics: numbersByName(),
      info: mapOf(str()),
      eventTimeMs: timeMs(),
      advantage: nullable(num("The advantage the loss gave this turn's action tokens; null when no stored sample says.")),
      sampleSpan: nullable({ ...turnSpan, description: "The turn's tokens in sample.tokens; null when not in the sample." }),
    }),
    `At most ${MAX_EPISODE_STEPS}.`,
  ),
  stepsTruncated: bool(`More than ${MAX_EPISODE_STEPS} steps: the first ones are returned.`),
  sample: nullable(
    shape<SampleView>({
      sampleId: str(),
      policyVersion: int(),
      reward: nullable(num()),
      estimator: str(),
      groupSize: int(),
      groupRewardMean: nullable(num()),
      groupRewardStd: nullable(num()),
      tokenCount: int(),
      lossTokenCount: int(),
      eventTimeMs: timeMs(),
      tokens: nullable(
        shape<SampleTokens>({
          tokenIds: arrayOf(int()),
          lossMask: arrayOf(int(undefined, { enum: [0, 1] }), '1 where the token is in the loss.'),
          advantages: arrayOf(nullable(num())),
          behaviourLogProbs: arrayOf(nullable(num())),
        }),
      ),
      stepAdvantages: nullable(arrayOf(nullable(num()))),
    }),
  ),
  sampleIds: arrayOf(str()),
  tokensStored: bool(),
  advantageSource: nullable(str("Where the steps' advantages come from.", { enum: ['sample-tokens', 'step-advantages', 'trajectory-advantage'] })),
  aligned: bool(),
  tokenText: nullable(
    shape<TokenText>(
      { tokenizer: str(), pieces: arrayOf(str(), 'One string per id of sample.tokens.tokenIds.') },
      { description: "The sample's tokens as text, when trajflow's tokenizer made them." },
    ),
  ),
});

const passMap = numbersByName('Value by k.');
const EPISODE_OUTCOMES = shape<{ runId: string; query: EpisodeOutcomesQuery } & EpisodeOutcomes>({
  runId: str(),
  query: shape<EpisodeOutcomesQuery>({ runId: str(), ...windowEcho }),
  trajectories: shape<EpisodeOutcomes['trajectories']>(
    {
      terminated: int('Episodes that ended in the environment (success or failure).'),
      truncated: int('Episodes cut short: out of turns, or timed out at the gateway.'),
      incomplete: int('Episodes the processors emitted unfinished (a group closed around them).'),
    },
    { description: 'Assembled trajectories of the run, by outcome (distinct episodes).' },
  ),
  gateway: shape<EpisodeOutcomes['gateway']>(
    {
      finished: int('Ended by the agent (POST /v1/episodes/{id}/finish).'),
      timedOut: int("No call and no finish within the gateway's episode timeout: published as truncated."),
    },
    { description: 'Episodes recorded by the OpenAI-compatible gateway, by how they ended (0 and 0 for a run without any).' },
  ),
});

const PASS_AT_K = shape<{ runId: string; query: SeriesQuery } & PassAtKResult>({
  runId: str(),
  query: seriesQuerySchema,
  ks: arrayOf(int(), 'Every k reported in the window, ascending.'),
  latest: nullable(shape<NonNullable<PassAtKResult['latest']>>({ batchId: str(), eventTimeMs: timeMs(), groups: int(), passAtK: passMap, passHatK: passMap })),
  overall: shape<PassAtKResult['overall']>({ batches: int(), passAtK: passMap, passHatK: passMap }, { description: 'The window pooled, each k weighted by group count.' }),
  byK: arrayOf(
    shape<PassAtKResult['byK'][number]>({
      k: int(),
      latestPassAtK: nullable(num()),
      latestPassHatK: nullable(num()),
      overallPassAtK: nullable(num()),
      overallPassHatK: nullable(num()),
    }),
  ),
  overTime: shape<PassAtKResult['overTime']>({
    ...seriesPlan,
    truncated: bool(),
    points: arrayOf(shape<PassPoint>({ timeMs: timeMs(), batchId: nullable(str()), batches: int(), passAtK: passMap, passHatK: passMap })),
  }),
});

const partitionLag = shape<PartitionLag>({
  partition: int(),
  committedOffset: nullable(int()),
  lowWatermark: nullable(int()),
  highWatermark: nullable(int()),
  lag: nullable(int('Records the group has yet to process.')),
});
const LAG = shape<{ query: LagQuery; totalLag: number | null } & LagReport>({
  query: shape<LagQuery>({ group: str() }, { optional: ['group'] }),
  prefix: str('The topic prefix of this deployment.'),
  groups: arrayOf(
    shape<GroupLag>({
      groupId: str(),
      state: str("The broker's group state (Stable, Empty, … Dead for a group it does not know)."),
      members: int(),
      lag: nullable(int()),
      topics: arrayOf(shape<TopicLag>({ topic: str(), lag: nullable(int()), partitions: arrayOf(partitionLag) })),
    }),
  ),
  truncated: bool(`More than ${MAX_LAG_GROUPS} groups.`),
  totalLag: nullable(int('Sum over the groups; null when some partition could not be read.')),
});

const selectionProperties = {
  runId: str('The run whose trajectories to replay.', { pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' }),
  source: str("Where the trajectories are selected: Kafka's trajectories topic, or ClickHouse.", { enum: [...REPLAY_SOURCES], default: 'kafka' }),
  fromMs: int('Trajectory event time ≥ this.', { minimum: 0 }),
  toMs: int('Trajectory event time < this.', { minimum: 0 }),
  partition: int('Only this partition of the trajectories topic.', { minimum: 0 }),
  fromOffset: int(undefined, { minimum: 0 }),
  toOffset: int(undefined, { minimum: 0 }),
  minPolicyVersion: int(undefined, { minimum: 0 }),
  maxPolicyVersion: int(undefined, { minimum: 0 }),
  minReward: num('Stored total reward ≥ this (finite).'),
  success: bool(),
  includeIncomplete: bool('Keep trajectories whose outcome is incomplete (default false).'),
  limit: int('At most this many trajectories.', { minimum: 1 }),
  fetch: str('ClickHouse source only: where the full events come from (default auto).', { enum: [...FETCH_MODES] }),
};
const selectionOptional = Object.keys(selectionProperties).filter((k) => k !== 'runId') as Array<keyof ReplaySelection & string>;

const ESTIMATOR: Json = {
  anyOf: [
    str('An estimator by name.', { enum: [...estimatorNames] }),
    { type: 'object', properties: { name: str(undefined, { enum: [...estimatorNames] }), options: { type: 'object' } }, required: ['name'], additionalProperties: false },
  ],
  description: 'The advantage estimator (default grpo); an unknown one is a 400 listing them.',
};
const processingSettings = {
  reward: { type: 'object', description: 'A reward spec: {"terms": [{"kind": …}], "gamma"?: …} (default env_return).' },
  estimator: ESTIMATOR,
  filters: arrayOf(
    { type: 'object', properties: { name: str(undefined, { enum: [...filterNames] }), options: { type: 'object' } }, required: ['name'], additionalProperties: false },
    'Group filters (default none).',
  ),
  maxContextTokens: int(undefined, { minimum: 1 }),
  ks: arrayOf(int(undefined, { minimum: 1 }), 'k values for pass@k and pass^k.'),
};
const processingOptional = Object.keys(processingSettings) as Array<keyof ProcessingSettingsBody & string>;

const REPLAY_REQUEST: Json = {
  ...shape<{ selection: ReplaySelection; processing: ReplayProcessingBody }>(
    {
      selection: shape<ReplaySelection>(selectionProperties, {
        optional: selectionOptional,
        closed: true,
        description: 'Which trajectories: the fields of `trajflow replay`. Unknown fields are refused.',
      }),
      processing: shape<ReplayProcessingBody>(
        {
          ...processingSettings,
          processing: shape<ProcessingSettingsBody>(processingSettings, {
            optional: processingOptional,
            closed: true,
            description: 'The same settings nested, as in a `trajflow replay --processing` file; not together with the ones above.',
          }),
          minGroupSize: int('Smallest group kept (default 2).', { minimum: 2 }),
          completeGroups: bool('Keep only groups with every episode (default false).'),
          batchGroups: int('Groups per replayed batch (default 64).', { minimum: 1 }),
          intoRunId: nullable(str('Run whose learner gets the samples; null or absent: the selected run.', { pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' })),
        },
        {
          optional: [...processingOptional, 'processing', 'minGroupSize', 'completeGroups', 'batchGroups', 'intoRunId'],
          closed: true,
          description:
            "How the selected trajectories become samples: reward, estimator and filters as for `trajflow processors` (default: env_return reward, grpo, no filters), and the replay's options. Unknown fields are refused (400 naming them). The replay id is set by the server.",
        },
      ),
    },
    { optional: ['processing'], closed: true },
  ),
  example: { selection: { runId: 'frozenlake-s1', source: 'clickhouse', success: true, limit: 256 }, processing: { estimator: 'grpo', batchGroups: 16 } },
};

const REPLAY_REPORT = shape<ReplayReport>({
  replayId: str(),
  selection: shape<ReplaySelection>(selectionProperties, { optional: selectionOptional }),
  runId: str('Run the samples were published for.'),
  samplesTopic: str(),
  estimator: str(),
  sampleIdScope: str(),
  trajectoriesRead: int(),
  trajectoriesSelected: int(),
  rebuiltFromSteps: int(),
  duplicates: int(),
  undecodable: int(),
  unavailable: arrayOf(shape<UnavailableTrajectory>({ episodeId: str(), reason: str(undefined, { enum: ['not-in-kafka', 'no-steps', 'rebuild-mismatch'] }), detail: str() })),
  groups: int(),
  groupsKept: int(),
  droppedGroups: arrayOf(shape<DroppedReplayGroup>({ groupId: str(), reason: str(), detail: str() })),
  droppedByReason: mapOf(int()),
  samplesBuilt: int(),
  samplesPublished: int(),
  policyVersions: nullable(shape<{ min: number; max: number }>({ min: int(), max: int() })),
  dryRun: bool(),
  durationMs: num(),
});

type ReplayStatus = 'running' | 'done' | 'failed';
const REPLAY_STATE = shape<{ replayId: string; status: ReplayStatus; startedAtMs: number; report?: ReplayReport; error?: string }>(
  {
    replayId: str(),
    status: str(undefined, { enum: ['running', 'done', 'failed'] satisfies ReplayStatus[] }),
    startedAtMs: timeMs(),
    report: ref('ReplayReport'),
    error: str('Why it failed.'),
  },
  { optional: ['report', 'error'], description: 'A replay this server started (it keeps the last 100, in memory).' },
);

// -------------------------------------------------------------------------------------- the parameters

const ID_DESCRIPTION = '1 to 256 characters from A-Z a-z 0-9 . _ - : / starting with a letter or digit';
const idSchema = (): Json => str(undefined, { pattern: ID_PATTERN.source, maxLength: 256 });

const pathId = (name: string, what: string, example: string): Parameter => ({
  name,
  in: 'path',
  required: true,
  description: `${what}: ${ID_DESCRIPTION} (percent-encode '/' as %2F).`,
  schema: idSchema(),
  example,
});

const query = (name: string, schema: Json, description: string, extra: Partial<Parameter> = {}): Parameter => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
  ...extra,
});

const limit = (fallback: number, max = MAX_ROWS): Parameter => query('limit', int(undefined, { minimum: 1, maximum: max, default: fallback }), 'Most rows returned.');

/** sinceMs and untilMs as windowParams (storage/query/params.ts) checks them. */
function windowQuery(what: string, limits: WindowLimits): Parameter[] {
  return [
    query(
      'sinceMs',
      int(undefined, { minimum: 0, maximum: MAX_TIME_MS }),
      `Inclusive lower bound on ${what}, ms since the epoch. Default: untilMs minus ${days(limits.defaultWindowMs)}; the window may span at most ${days(limits.maxWindowMs)} and must be non-empty.`,
    ),
    query(
      'untilMs',
      int(undefined, { minimum: 1, maximum: MAX_TIME_MS }),
      `Exclusive upper bound on ${what}, ms since the epoch. Default: now plus ${CLOCK_SKEW_MS / 1000} s (for clocks slightly ahead).`,
    ),
  ];
}

const ref$ = (kind: 'parameters' | 'responses' | 'headers', name: string): Json => ({ $ref: `#/components/${kind}/${name}` });

// --------------------------------------------------------------------------------------- the responses

const problemContent = (examples: ReadonlyArray<readonly [ProblemType, string]>): Json => ({
  'application/problem+json': {
    schema: ref('Problem'),
    examples: Object.fromEntries(examples.map(([type, detail]) => [type.slug, { summary: type.title, value: problem(type, detail) }])),
  },
});

const problemResponse = (description: string, examples: ReadonlyArray<readonly [ProblemType, string]>, headers: readonly string[] = []): Json => ({
  description,
  ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((h) => [h, ref$('headers', h)])) } : {}),
  content: problemContent(examples),
});

const jsonResponse = (description: string, schema: Json, headers: readonly string[] = ['Cache-Control']): Json => ({
  description,
  ...(headers.length > 0 ? { headers: Object.fromEntries(headers.map((h) => [h, ref$('headers', h)])) } : {}),
  content: { 'application/json': { schema } },
});

type Responses = Record<string, Json>;
const WRITE: Operation['security'] = [{ bearerAuth: [] }];
const READ: Operation['security'] = [{ bearerAuth: [] }, {}];
const OPEN: Operation['security'] = [];

/** The responses every operation with `security` may give, plus the 500 any may. */
function common(security: Operation['security'], withMethodNotAllowed = true): Responses {
  return {
    // 403 everywhere: a Host or Origin the server does not answer for (host-check.ts), and a wrong token where there is auth.
    ...(security.length > 0 ? { '401': ref$('responses', 'Unauthenticated'), '403': ref$('responses', 'Forbidden') } : { '403': ref$('responses', 'HostNotAllowed') }),
    ...(withMethodNotAllowed ? { '405': ref$('responses', 'MethodNotAllowed') } : {}),
    '500': ref$('responses', 'Internal'),
  };
}

const badQuery = (alsoPath: boolean): Json => ({
  $ref: `#/components/responses/${alsoPath ? 'InvalidPathOrQuery' : 'InvalidQuery'}`,
});

/** A read over ClickHouse: 200 JSON, 400 for a bad parameter, 503 when ClickHouse fails. */
function read(op: {
  id: string;
  summary: string;
  description: string;
  tags: string[];
  parameters: ReadonlyArray<Parameter | Json>;
  ok: Json;
  pathIds?: boolean;
  extra?: Responses;
}): { get: Operation } {
  return {
    get: {
      operationId: op.id,
      summary: op.summary,
      description: op.description,
      tags: op.tags,
      security: READ,
      parameters: op.parameters,
      responses: {
        '200': jsonResponse('The rows.', op.ok),
        '400': badQuery(op.pathIds ?? false),
        ...op.extra,
        '503': ref$('responses', 'ClickHouseUnavailable'),
        ...common(READ),
      },
    },
  };
}

/** `{ [runId,] query, count, truncated, <items> }`, the envelope of the list endpoints. */
function list(items: string, item: Json, querySchema: Json, options: { runId?: boolean; truncated?: boolean } = {}): Json {
  const properties: Record<string, Json> = {
    ...(options.runId ? { runId: str() } : {}),
    query: { ...querySchema, description: 'The parameters as the server read them, defaults filled in.' },
    count: int('Rows in this response.'),
    ...(options.truncated === false ? {} : { truncated: bool('More rows matched than `limit`.') }),
    [items]: arrayOf(item),
  };
  return { type: 'object', properties, required: Object.keys(properties) };
}

const runQuery = { runId: str(), limit: int(), ...windowEcho, order: str(undefined, { enum: ['asc', 'desc'] }) };

/** The 200 bodies of the list endpoints, named so that clients and the reference page can refer to them. */
const ENVELOPES: Record<string, Json> = {
  DeadLetterList: list(
    'deadLetters',
    ref('DeadLetter'),
    shape<DeadLetterQuery>({ limit: int(), ...windowEcho, order: str(undefined, { enum: ['asc', 'desc'] }), reason: str() }, { optional: ['reason'] }),
    { truncated: false },
  ),
  RunList: list('runs', ref('Run'), shape<RunsQuery>({ limit: int(), ...windowEcho, runIds: arrayOf(str()) }, { optional: ['runIds'] })),
  Curve: shape<{ runId: string; query: SeriesQuery; count: number } & CurveResult>({
    runId: str(),
    query: seriesQuerySchema,
    count: int(),
    ...seriesPlan,
    truncated: bool(),
    points: arrayOf(ref('CurvePoint')),
  }),
  RolloutStatsList: list(
    'rolloutStats',
    ref('RolloutStats'),
    shape<RolloutStatsQuery>({ ...runQuery, scope: str(undefined, { enum: ['batch', 'group'] }), batchId: str(), groupId: str() }, { optional: ['batchId', 'groupId'] }),
    { runId: true },
  ),
  LearnerStepList: list('learnerSteps', ref('LearnerStep'), shape<LearnerMetricsQuery>(runQuery), { runId: true }),
  AlertList: list('alerts', ref('Alert'), shape<AlertsQuery>({ ...runQuery, kind: str(), severity: str() }, { optional: ['kind', 'severity'] }), { runId: true }),
  EvaluationList: list('evaluations', ref('Evaluation'), shape<EvaluationsQuery>(runQuery), { runId: true }),
  TrajectoryList: list(
    'trajectories',
    ref('Trajectory'),
    shape<TrajectoriesQuery>(
      { ...runQuery, success: bool(), outcome: str(undefined, { enum: ['terminated', 'truncated', 'incomplete'] }), groupId: str() },
      { optional: ['success', 'outcome', 'groupId'] },
    ),
    { runId: true },
  ),
};

// --------------------------------------------------------------------------------------------- the paths

const RUN_TIME = "the rows' event time";
const RUN_ID = ref$('parameters', 'runId');
const EPISODE_ID = ref$('parameters', 'episodeId');
const MAX_STEPS = defaultApiConfig.maxStepsPerRequest;

/** This document and /health: open. */
function metaPaths(): Record<string, PathItem> {
  return {
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This document',
        description: 'The OpenAPI 3.1 description of the API. Open: it holds no data.',
        tags: ['meta'],
        security: OPEN,
        responses: { '200': jsonResponse('The document.', { type: 'object' }), ...common(OPEN) },
      },
    },
    '/health': {
      get: {
        operationId: 'getHealth',
        summary: 'Can the API do its job right now?',
        description:
          'Probes Kafka (what ingest needs) and ClickHouse (what reads need), each with its own timeout. Kafka down is a 503 `fail`; ClickHouse down is a 200 `degraded` (ingest still works). Open, for load balancers and probes.',
        tags: ['operations'],
        security: OPEN,
        responses: {
          '200': jsonResponse('ok or degraded.', ref('Health')),
          '503': jsonResponse('fail: Kafka does not answer. The body is the same health report, not a problem.', ref('Health')),
          ...common(OPEN, false),
        },
      },
    },
  };
}

/** POST /v1/steps. */
function ingestPaths(): Record<string, PathItem> {
  return {
    '/v1/steps': {
      post: {
        operationId: 'postSteps',
        summary: 'Publish step events',
        description: [
          `Step events from any language, into <prefix>.env.steps. The body is ${JSON_TYPE} (one step, or {"steps": [...]} with up to ${MAX_STEPS} steps by default: TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST) or ${AVRO_TYPE} (one step in Avro single-object encoding: 0xC3 0x01, the writer schema's CRC-64-AVRO fingerprint little-endian, the binary record).`,
          `The body may be gzip-, deflate- or br-compressed (Content-Encoding); its size limit (default ${defaultApiConfig.maxBodyBytes} bytes: TRAJFLOW_DASHBOARD_MAX_BODY_BYTES) applies after decompression, and to the bytes on the wire: a body declared larger (Content-Length) is a 413 at once, before any of it is read, and one sent without a length (chunked) is a 413 as soon as the bytes received pass the limit; either way the connection is then closed.`,
          "Order of checks: token (401/403) → Content-Type (415) → size (413) → parse → per-token rate limit on the step count (429) → every step converted and validated (400) → all published, Kafka's acks awaited → 202.",
          'All or nothing: a batch with one bad step publishes nothing. A body refused with 400 is also written to the dead-letter topic (source topic `http:/v1/steps`); the problem says whether (`deadLettered`). On 503 some steps may have been written: retry, consumers drop duplicates by eventId.',
        ].join('\n\n'),
        tags: ['ingest'],
        security: WRITE,
        requestBody: {
          required: true,
          content: {
            [JSON_TYPE]: {
              schema: { oneOf: [ref('StepEvent'), ref('StepBatch')] },
              examples: { one: { summary: 'One step', value: EXAMPLE_STEP }, batch: { summary: 'A batch', value: { steps: [EXAMPLE_STEP] } } },
            },
            [AVRO_TYPE]: {
              schema: {
                type: 'string',
                format: 'binary',
                description: 'One StepEvent in Avro single-object encoding, with the fingerprint of a step schema version the server has (schemas/step/vN.avsc).',
              },
            },
          },
        },
        responses: postStepsResponses(),
      },
    },
  };
}

/** What POST /v1/steps answers, from 202 to the problems of each check. */
function postStepsResponses(): Responses {
  return {
    '202': jsonResponse('Every step was acknowledged by Kafka.', ref('Accepted'), []),
    '400': problemResponse(
      'invalid-body (not JSON, not UTF-8, a key twice in one object, not an object, empty, undecodable Avro, a bad `steps`) or invalid-step (a field of a step: `field`, and `index` in a batch). Carries `reason` and `deadLettered`.',
      [
        [problemTypes.invalidBody, 'the body is not valid JSON: Unexpected end of JSON input'],
        [problemTypes.invalidStep, 'steps[2].actionLogProbs[0]: log-prob must be finite and <= 0, got 0.5'],
      ],
    ),
    '413': problemResponse('The body (or its declared Content-Length) is over the byte limit, a batch has too many steps, or a step is over the event size limit.', [
      [problemTypes.tooLarge, `the batch has ${MAX_STEPS + 1} steps, more than the ${MAX_STEPS} allowed per request: split it`],
    ]),
    '415': problemResponse(
      'Content-Type is neither of the two accepted (or the body uses an unknown Content-Encoding or charset).',
      [
        [
          problemTypes.unsupportedMediaType,
          `Content-Type 'text/plain' is not accepted: send ${JSON_TYPE} (one step or {"steps": [...]}) or ${AVRO_TYPE} (one Avro single-object step event)`,
        ],
      ],
      ['Accept-Post'],
    ),
    '429': problemResponse(
      "The token's step budget is spent (a token bucket per token: TRAJFLOW_DASHBOARD_RATE_STEPS_PER_SECOND, TRAJFLOW_DASHBOARD_RATE_BURST). Nothing was published.",
      [[problemTypes.rateLimited, 'this token may publish 500 more step(s) in about 2 s']],
      ['Retry-After'],
    ),
    '503': problemResponse(
      'Kafka did not acknowledge in time (TRAJFLOW_DASHBOARD_PUBLISH_TIMEOUT_MS); retrying is safe.',
      [[problemTypes.kafkaUnavailable, 'Kafka did not acknowledge the steps; some may have been written. Retry later: consumers drop duplicates by eventId.']],
      ['Retry-After'],
    ),
    ...common(WRITE),
  };
}

/** Dead letters, runs and the series of a run. */
function runPaths(): Record<string, PathItem> {
  return {
    '/v1/dead-letters': deadLettersPath(),
    '/v1/runs': runsPath(),
    '/v1/runs/{runId}/curve': curvePath(),
    '/v1/runs/{runId}/rollout-stats': rolloutStatsPath(),
    '/v1/runs/{runId}/learner-metrics': learnerMetricsPath(),
    '/v1/runs/{runId}/alerts': alertsPath(),
    '/v1/runs/{runId}/episode-outcomes': episodeOutcomesPath(),
    '/v1/runs/{runId}/pass-at-k': passAtKPath(),
    '/v1/runs/{runId}/evaluations': evaluationsPath(),
  };
}

/** GET /v1/dead-letters. */
function deadLettersPath(): PathItem {
  return read({
    id: 'listDeadLetters',
    summary: 'Dead letters',
    description: 'Records consumers (and POST /v1/steps) rejected, as the sink stored them in ClickHouse, newest first by default. Unknown or repeated parameters are a 400.',
    tags: ['reads'],
    parameters: [
      limit(DEAD_LETTERS_DEFAULT_LIMIT, DEAD_LETTERS_MAX_LIMIT),
      ...windowQuery('the time the record was dead-lettered', { defaultWindowMs: DEAD_LETTERS_DEFAULT_WINDOW_MS, maxWindowMs: DEAD_LETTERS_MAX_WINDOW_MS }),
      query('order', order('desc'), 'By time.'),
      query('reason', str(undefined, { pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }), 'Only this reason code.', { example: 'invalid-value' }),
    ],
    ok: ref('DeadLetterList'),
  });
}

/** GET /v1/runs. */
function runsPath(): PathItem {
  return read({
    id: 'listRuns',
    summary: 'Runs',
    description: 'Every run with events in the window, newest activity first, with its counts; with runIds, only those runs (a run with no events in the window is not listed).',
    tags: ['runs'],
    parameters: [
      limit(RUNS_DEFAULT_LIMIT),
      ...windowQuery("the runs' event times", { defaultWindowMs: RUNS_DEFAULT_WINDOW_MS, maxWindowMs: RUNS_MAX_WINDOW_MS }),
      query(
        'runIds',
        { type: 'array', items: idSchema(), minItems: 1, maxItems: RUNS_MAX_IDS, uniqueItems: true },
        `Comma-separated run ids (${ID_DESCRIPTION}): only these runs. The window then defaults to the widest, ${days(RUNS_MAX_WINDOW_MS)}.`,
        { style: 'form', explode: false },
      ),
    ],
    ok: ref('RunList'),
  });
}

/** GET /v1/runs/{runId}/curve. */
function curvePath(): PathItem {
  return read({
    id: 'getRunCurve',
    summary: 'Learning curve',
    description: `One point per rollout batch, or per time bucket with bucketMs. Without bucketMs a window with more batches than \`limit\` is bucketed automatically (autoBucketed).`,
    tags: ['runs'],
    pathIds: true,
    parameters: [
      RUN_ID,
      ...windowQuery(RUN_TIME, RUN_WINDOW),
      query('bucketMs', int(undefined, { minimum: MIN_BUCKET_MS, maximum: MAX_BUCKET_MS }), 'Bucket width in ms; absent: one point per batch.', { example: 60_000 }),
      limit(CURVE_DEFAULT_LIMIT),
    ],
    ok: ref('Curve'),
  });
}

/** GET /v1/runs/{runId}/rollout-stats. */
function rolloutStatsPath(): PathItem {
  return read({
    id: 'listRolloutStats',
    summary: 'Rollout statistics',
    description: "The processors' statistics per rollout batch (scope=batch) or per group (scope=group).",
    tags: ['runs'],
    pathIds: true,
    parameters: [
      RUN_ID,
      query('scope', str(undefined, { enum: ['batch', 'group'], default: 'batch' }), 'Batch rows or group rows.'),
      limit(ROLLOUT_STATS_DEFAULT_LIMIT),
      ...windowQuery(RUN_TIME, RUN_WINDOW),
      query('order', order('asc'), 'By event time.'),
      query('batchId', idSchema(), `Only this batch (${ID_DESCRIPTION}).`),
      query('groupId', idSchema(), `Only this group (${ID_DESCRIPTION}).`),
    ],
    ok: ref('RolloutStatsList'),
  });
}

/** GET /v1/runs/{runId}/learner-metrics. */
function learnerMetricsPath(): PathItem {
  return read({
    id: 'listLearnerMetrics',
    summary: 'Learner metrics',
    description: 'One row per learner step: losses, KL, entropy, clipping, staleness.',
    tags: ['runs'],
    pathIds: true,
    parameters: [RUN_ID, limit(LEARNER_METRICS_DEFAULT_LIMIT), ...windowQuery(RUN_TIME, RUN_WINDOW), query('order', order('asc'), 'By step.')],
    ok: ref('LearnerStepList'),
  });
}

/** GET /v1/runs/{runId}/alerts. */
function alertsPath(): PathItem {
  return read({
    id: 'listAlerts',
    summary: 'Collapse alerts',
    description: 'What the collapse detectors raised for the run.',
    tags: ['runs'],
    pathIds: true,
    parameters: [
      RUN_ID,
      limit(ALERTS_DEFAULT_LIMIT),
      ...windowQuery(RUN_TIME, RUN_WINDOW),
      query('order', order('desc'), 'By event time.'),
      query('kind', str(undefined, { pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }), 'Only this detector kind.', { example: 'entropy_collapse' }),
      query('severity', str(undefined, { pattern: '^[a-z]{1,32}$' }), 'Only this severity.', { example: 'warning' }),
    ],
    ok: ref('AlertList'),
  });
}

/** GET /v1/runs/{runId}/episode-outcomes. */
function episodeOutcomesPath(): PathItem {
  return read({
    id: 'getEpisodeOutcomes',
    summary: 'How the episodes ended',
    description: "Assembled trajectories by outcome, and the gateway's episodes by how they were ended (finished by the agent or timed out).",
    tags: ['runs'],
    pathIds: true,
    parameters: [RUN_ID, ...windowQuery(RUN_TIME, RUN_WINDOW)],
    ok: ref('EpisodeOutcomes'),
  });
}

/** GET /v1/runs/{runId}/pass-at-k. */
function passAtKPath(): PathItem {
  return read({
    id: 'getPassAtK',
    summary: 'pass@k and pass^k',
    description: 'The latest batch that reported them, the window pooled (weighted by group count), and the series over time (bucketed as the curve).',
    tags: ['runs'],
    pathIds: true,
    parameters: [
      RUN_ID,
      ...windowQuery(RUN_TIME, RUN_WINDOW),
      query('bucketMs', int(undefined, { minimum: MIN_BUCKET_MS, maximum: MAX_BUCKET_MS }), 'Bucket width in ms; absent: one point per batch.'),
      limit(CURVE_DEFAULT_LIMIT),
    ],
    ok: ref('PassAtK'),
  });
}

/** GET /v1/runs/{runId}/evaluations. */
function evaluationsPath(): PathItem {
  return read({
    id: 'listEvaluations',
    summary: 'Held-out evaluations',
    description: "The evaluator's results per policy version.",
    tags: ['runs'],
    pathIds: true,
    parameters: [RUN_ID, limit(EVALUATIONS_DEFAULT_LIMIT), ...windowQuery(RUN_TIME, RUN_WINDOW), query('order', order('asc'), 'By event time.')],
    ok: ref('EvaluationList'),
  });
}

/** Trajectories, listed and one by one. */
function trajectoryPaths(): Record<string, PathItem> {
  return {
    '/v1/runs/{runId}/trajectories': read({
      id: 'listTrajectories',
      summary: 'Trajectories of a run',
      description: 'Assembled episodes, newest first by default.',
      tags: ['trajectories'],
      pathIds: true,
      parameters: [
        RUN_ID,
        limit(TRAJECTORIES_DEFAULT_LIMIT),
        ...windowQuery("the trajectories' last event time", RUN_WINDOW),
        query('order', order('desc'), 'By last event time.'),
        query('success', bool(), 'Only successful (true) or failed (false) episodes; 1 and 0 are accepted too.', { example: true }),
        query('outcome', str(undefined, { enum: ['terminated', 'truncated', 'incomplete'] }), 'Only this outcome.'),
        query('groupId', idSchema(), `Only this group (${ID_DESCRIPTION}).`),
      ],
      ok: ref('TrajectoryList'),
    }),
    '/v1/runs/{runId}/trajectories/{episodeId}': read({
      id: 'getRunEpisode',
      summary: 'One episode of a run, turn by turn',
      description: `The trajectory, its steps (at most ${MAX_EPISODE_STEPS}), the newest training sample built from it with per-turn advantages, and the sample's tokens as text when trajflow's tokenizer made them. Takes no query parameters.`,
      tags: ['trajectories'],
      pathIds: true,
      parameters: [RUN_ID, EPISODE_ID],
      ok: ref('Episode'),
      extra: { '404': problemResponse('The run has no such episode.', [[problemTypes.notFound, "no episode 'episode-0' in run 'frozenlake-s1'"]]) },
    }),
    '/v1/trajectories/{episodeId}': read({
      id: 'getEpisode',
      summary: 'One episode, by id alone',
      description: 'As GET /v1/runs/{runId}/trajectories/{episodeId}, the run found from the episode id; 409 when several runs have it (add ?runId=).',
      tags: ['trajectories'],
      pathIds: true,
      parameters: [EPISODE_ID, query('runId', idSchema(), `The run, when the episode id is in several (${ID_DESCRIPTION}).`, { example: 'frozenlake-s1' })],
      ok: ref('Episode'),
      extra: {
        '404': problemResponse('No run has the episode.', [[problemTypes.notFound, "no episode 'episode-0' in any run"]]),
        '409': problemResponse('More than one run has the episode id: `runIds` names them; add ?runId=.', [
          [problemTypes.ambiguous, "episode 'episode-0' is in more than one run (run-a, run-b): add ?runId="],
        ]),
      },
    }),
  };
}

/** Consumer lag and the live event stream. */
function streamPaths(): Record<string, PathItem> {
  return {
    '/v1/lag': lagPath(),
    '/v1/events': eventsPath(),
  };
}

/** GET /v1/lag. */
function lagPath(): PathItem {
  return {
    get: {
      operationId: 'getLag',
      summary: 'Consumer lag',
      description: `Lag of the project's consumer groups (${PROJECT_GROUPS.join(', ')}, and others under the topic prefix; at most ${MAX_LAG_GROUPS}), per topic and partition, read from Kafka.`,
      tags: ['operations'],
      security: READ,
      parameters: [query('group', str(undefined, { pattern: GROUP_PATTERN.source }), 'Only this consumer group.', { example: 'processors' })],
      responses: {
        '200': jsonResponse('The lag report.', ref('Lag')),
        '400': ref$('responses', 'InvalidQuery'),
        '503': problemResponse(
          'Kafka did not answer, or this server has no Kafka admin client.',
          [[problemTypes.kafkaUnavailable, 'Kafka did not answer the offset requests; is it running (trajflow status)?']],
          ['Retry-After'],
        ),
        ...common(READ),
      },
    },
  };
}

/** GET /v1/events (server-sent events). */
function eventsPath(): PathItem {
  return {
    get: {
      operationId: 'streamEvents',
      summary: 'Live events of a run (server-sent events)',
      description: [
        `A text/event-stream of one run's new rows, found by polling ClickHouse. It opens with \`retry: 2000\` and an \`event: ready\` (data: {runId, types, sinceMs}); then events named ${EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}, whose data is the JSON of the REST endpoint of the type (RolloutStats, LearnerStep, Alert, Evaluation) and whose \`id\` is the event time in ms; a \`: heartbeat\` comment while idle; an \`event: problem\` (a Problem) when ClickHouse fails, polling going on.`,
        'Without sinceMs only rows that arrive after `ready` are sent. An EventSource that reconnects sends Last-Event-ID and resumes a lookback before it. Parameters are checked, and ClickHouse asked once, before the 200: those errors are problem JSON.',
      ].join('\n\n'),
      tags: ['reads'],
      security: READ,
      parameters: eventsParameters(),
      responses: {
        '200': {
          description: 'The stream; it stays open until the client leaves or the server shuts down.',
          headers: { 'Cache-Control': ref$('headers', 'Cache-Control') },
          content: {
            'text/event-stream': {
              schema: str('Server-sent events, as described above.'),
              example: 'retry: 2000\n\nevent: ready\ndata: {"runId":"frozenlake-s1","types":["alert"],"sinceMs":null}\n\n: heartbeat 1767225615000\n\n',
            },
          },
        },
        '400': ref$('responses', 'InvalidQuery'),
        '503': problemResponse(
          `ClickHouse failed, or the server has as many streams open as it keeps (default ${defaultApiConfig.maxEventStreams}: TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS), or this client (its remote address; behind a proxy, the proxy's) has as many open as one client may (default ${defaultApiConfig.maxEventStreamsPerClient}: TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS_PER_CLIENT).`,
          [
            [problemTypes.clickhouseUnavailable, 'ClickHouse is not reachable; is it running (trajflow status)?'],
            [problemTypes.tooManyStreams, `this client has ${defaultApiConfig.maxEventStreamsPerClient} event streams open, the most one client may; close one, or retry later`],
          ],
          ['Retry-After'],
        ),
        ...common(READ),
      },
    },
  };
}

/** The run, the event types, and where to start: sinceMs or, on reconnect, Last-Event-ID. */
function eventsParameters(): Parameter[] {
  return [
    query('runId', idSchema(), `The run (${ID_DESCRIPTION}).`, { required: true, example: 'frozenlake-s1' }),
    query(
      'types',
      { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] }, minItems: 1, uniqueItems: true, default: [...EVENT_TYPES] },
      'Comma-separated event types (default all).',
      { style: 'form', explode: false, example: ['rollout-stats', 'alert'] },
    ),
    query('sinceMs', int(undefined, { minimum: 0, maximum: MAX_TIME_MS }), 'Send rows from this event time on (a replay of the past, then live).'),
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'Sent by an EventSource that reconnects: the id (event time) of the last event it got; overrides sinceMs.',
      schema: str(undefined, { pattern: '^\\d{1,16}$' }),
    },
  ];
}

/** Replays. */
function replayPaths(): Record<string, PathItem> {
  return {
    '/v1/replay': {
      post: {
        operationId: 'startReplay',
        summary: 'Start an off-policy replay',
        description:
          "Selects stored trajectories and publishes training samples built from them (marked `replay:`) for the run's learner, as `trajflow replay` does. Answers 202 at once with the replay's id; GET /v1/replays/{replayId} tells how it went. An unknown field, an unknown estimator or a bad value is a 400 naming it, before anything starts.",
        tags: ['replay'],
        security: WRITE,
        requestBody: { required: true, content: { [JSON_TYPE]: { schema: ref('ReplayRequest') } } },
        responses: {
          '202': {
            description: 'Started.',
            headers: { Location: ref$('headers', 'Location') },
            content: { 'application/json': { schema: shape<{ replayId: string; status: ReplayStatus }>({ replayId: str(), status: str(undefined, { enum: ['running'] }) }) } },
          },
          '400': problemResponse(
            'The body is not JSON (or not UTF-8, or names a key twice), is not {"selection": {...}, "processing"?: {...}}, or a field is not valid (`field` names it when it can).',
            [[problemTypes.invalidBody, "replay selection: unknown field 'runID'; known fields: runId, source, …"]],
          ),
          '413': problemResponse(`The body (or its declared Content-Length) is over ${REPLAY_BODY_LIMIT / 1024} KiB.`, [
            [problemTypes.tooLarge, `the body is larger than the ${REPLAY_BODY_LIMIT}-byte limit`],
          ]),
          '415': problemResponse(
            'Content-Type is not application/json.',
            [[problemTypes.unsupportedMediaType, "Content-Type 'text/plain' is not accepted: send application/json"]],
            ['Accept-Post'],
          ),
          '503': problemResponse('This server has no Kafka producer for replays.', [[problemTypes.kafkaUnavailable, 'this server has no Kafka producer for replays']]),
          ...common(WRITE),
        },
      },
    },
    '/v1/replays/{replayId}': {
      get: {
        operationId: 'getReplay',
        summary: "A replay's state",
        description: "running, done (with the report) or failed (with why). Replays live in this server's memory: the last 100 are kept, none survives a restart.",
        tags: ['replay'],
        security: WRITE,
        parameters: [{ name: 'replayId', in: 'path', required: true, description: 'As POST /v1/replay answered.', schema: str(), example: 'http-1a2b3c4d5e6f' }],
        responses: {
          '200': jsonResponse('The replay.', ref('ReplayState')),
          '400': problemResponse('The path is not valid percent-encoded UTF-8.', [[problemTypes.invalidPath, 'a path parameter is not valid percent-encoded UTF-8']]),
          '404': problemResponse('No such replay on this server.', [[problemTypes.notFound, 'no replay http-1a2b3c4d5e6f on this server']]),
          ...common(WRITE, false),
        },
      },
    },
  };
}

/** How a client proves it may call: static bearer tokens. */
function securitySchemes(): OpenApiDocument['components']['securitySchemes'] {
  return {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description: [
        'Static bearer tokens (RFC 6750, Authorization header only: never in the URL), configured in TRAJFLOW_DASHBOARD_TOKENS (comma-separated; each at least 16 characters from A-Z a-z 0-9 - . _ ~ + /). They are opaque shared secrets, not JWTs, and carry no scopes: any configured token may do everything.',
        'When a token is needed: writes (POST /v1/steps, POST /v1/replay, GET /v1/replays/{replayId}) whenever at least one token is configured; reads (the other /v1 endpoints) only when the server is bound beyond loopback — `security: [{bearerAuth: []}, {}]` marks them, the empty alternative being a loopback server. A server bound beyond loopback refuses to start without tokens, and one on loopback without tokens accepts everything.',
        'No or malformed Authorization header: 401 `unauthenticated`; a token that is not configured: 403 `forbidden`; both with WWW-Authenticate: Bearer realm="trajflow". An Authorization header is checked wherever it is sent, whenever the server has tokens: a read on loopback needs none, but a wrong one is a 403 there too. The rate limit of POST /v1/steps is per token.',
      ].join('\n\n'),
    },
  };
}

/** Every named schema, in the order the reference page lists them. */
function schemas(): OpenApiDocument['components']['schemas'] {
  return {
    Problem: PROBLEM,
    Health: HEALTH,
    StepEvent: stepSchema(),
    StepBatch: {
      type: 'object',
      description: `Several steps in one request (at most TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST, default ${MAX_STEPS}: more is a 413), published all or none. Nothing may stand next to "steps".`,
      properties: { steps: arrayOf(ref('StepEvent')) },
      required: ['steps'],
      additionalProperties: false,
    },
    Accepted: shape<{ accepted: number }>({ accepted: int('Steps published.', { minimum: 1 }) }),
    DeadLetter: DEAD_LETTER,
    Run: RUN,
    CurvePoint: CURVE_POINT,
    RolloutStats: ROLLOUT_STATS,
    LearnerStep: LEARNER_STEP,
    Alert: ALERT,
    PassAtK: PASS_AT_K,
    EpisodeOutcomes: EPISODE_OUTCOMES,
    ...ENVELOPES,
    Evaluation: EVALUATION,
    Trajectory: TRAJECTORY,
    Episode: EPISODE,
    Lag: LAG,
    ReplayRequest: REPLAY_REQUEST,
    ReplayReport: REPLAY_REPORT,
    ReplayState: REPLAY_STATE,
  };
}

/** The response headers the operations name. */
function headers(): OpenApiDocument['components']['headers'] {
  return {
    'WWW-Authenticate': { description: 'Bearer realm="trajflow" (with error="invalid_token" on 403).', schema: str() },
    'Retry-After': { description: 'Seconds to wait before retrying.', schema: int(undefined, { minimum: 1 }) },
    Allow: { description: 'The methods the path has.', schema: str() },
    'Accept-Post': { description: `The accepted media types: ${JSON_TYPE}, ${AVRO_TYPE} (POST /v1/steps); ${JSON_TYPE} (POST /v1/replay).`, schema: str() },
    Location: { description: "GET this for the replay's state: /v1/replays/{replayId}.", schema: str() },
    'Cache-Control': { description: 'no-store: reads are live.', schema: str() },
  };
}

/** The problem responses several operations share. */
function sharedResponses(): OpenApiDocument['components']['responses'] {
  return {
    InvalidQuery: problemResponse('A query parameter is unknown, given twice, or not valid (`field` names it).', [
      [problemTypes.invalidQuery, 'limit: must be between 1 and 1000, got 5000'],
    ]),
    InvalidPathOrQuery: problemResponse('A path id or a query parameter is not valid (`field` names it).', [
      [problemTypes.invalidPath, `runId: must be an id of ${ID_DESCRIPTION} (percent-encode '/' as %2F), got 'a b'`],
      [problemTypes.invalidQuery, "order: must be one of asc, desc, got 'up'"],
    ]),
    Unauthenticated: problemResponse(
      'No Authorization: Bearer header (or another scheme).',
      [[problemTypes.unauthenticated, 'this endpoint needs an `Authorization: Bearer <token>` header']],
      ['WWW-Authenticate'],
    ),
    Forbidden: problemResponse(
      'The bearer token is not one the server has (`forbidden`, with WWW-Authenticate), or the Host or Origin header is not one the server answers for (`host-not-allowed`, `field` naming the header).',
      [
        [problemTypes.forbidden, 'the bearer token is not one this server accepts'],
        [hostNotAllowed, HOST_REFUSED],
      ],
      ['WWW-Authenticate'],
    ),
    HostNotAllowed: problemResponse('The Host or Origin header is not one the server answers for (`field` names the header).', [[hostNotAllowed, HOST_REFUSED]]),
    MethodNotAllowed: problemResponse('The path does not have this method.', [[problemTypes.methodNotAllowed, 'DELETE is not allowed here; use GET']], ['Allow']),
    ClickHouseUnavailable: problemResponse(
      'ClickHouse is not reachable or could not answer (its message goes to the server log).',
      [[problemTypes.clickhouseUnavailable, 'ClickHouse is not reachable; is it running (trajflow status)?']],
      ['Retry-After'],
    ),
    Internal: problemResponse('An unexpected error; the server log has it under `errorId`.', [
      [problemTypes.internal, 'an unexpected error occurred; the server log has it under id 0b9f6c1e-2f4a-4d8e-9c1a-7e5d3b2a1f00'],
    ]),
  };
}

function components(): OpenApiDocument['components'] {
  return {
    securitySchemes: securitySchemes(),
    schemas: schemas(),
    parameters: {
      runId: pathId('runId', 'The run', 'frozenlake-s1'),
      episodeId: pathId('episodeId', 'The episode', 'episode-0'),
    },
    headers: headers(),
    responses: sharedResponses(),
  };
}

function buildDocument(): OpenApiDocument {
  const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  return {
    openapi: '3.1.0',
    info: {
      title: 'trajflow HTTP API',
      version,
      summary: 'Ingest step events, read what the pipeline stored, follow a run live, start replays.',
      description: [
        `The HTTP API of \`trajflow dashboard\` (default http://127.0.0.1:${DEFAULT_API_PORT}). Reference: docs/reference/http-api.md.`,
        'Errors are RFC 9457 problem details (`application/problem+json`, schema Problem) on every path: an unknown path is a 404 `not-found`; a method a known path does not have is a 405 `method-not-allowed` with Allow; a path parameter that is not valid percent-encoded UTF-8 is a 400; an unexpected failure is a 500 whose body has only an `errorId` for the server log.',
        'Query parameters are read strictly: an unknown one (a typo) or one given twice is a 400 naming it. HEAD is answered for every GET. Every response carries `X-Content-Type-Options: nosniff`.',
        'Authentication: see the bearerAuth security scheme. Writes need a token whenever the server has tokens; reads need one when the server is bound beyond loopback; /health and /openapi.json are open.',
        `Host and Origin (DNS rebinding, cross-site requests): a server bound to loopback answers only for localhost, 127.0.0.1 and [::1] with its port, and the names in TRAJFLOW_DASHBOARD_ALLOWED_HOSTS (\`name\` for any port, \`name:port\`; \`*\` turns the check off); any other Host is a 403 \`host-not-allowed\` on every path. A server bound beyond loopback checks Host only when names are configured. A request with an Origin (a browser's cross-site request) must come from an allowed host, or, without the check, from the request's own host. 403 rather than 421 Misdirected Request: retrying on another connection would reach the same server.`,
      ].join('\n\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [
      { name: 'ingest', description: 'Step events in.' },
      { name: 'runs', description: 'What the pipeline stored about a run (ClickHouse).' },
      { name: 'trajectories', description: 'Episodes, turn by turn.' },
      { name: 'reads', description: 'Dead letters and the live event stream.' },
      { name: 'replay', description: 'Off-policy replays.' },
      { name: 'operations', description: 'Health and consumer lag.' },
      { name: 'meta', description: 'This document.' },
    ],
    paths: { ...metaPaths(), ...ingestPaths(), ...runPaths(), ...trajectoryPaths(), ...streamPaths(), ...replayPaths() },
    components: components(),
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

let built: OpenApiDocument | undefined;

/** The document (built once, frozen). */
export function openApiDocument(): OpenApiDocument {
  built ??= deepFreeze(buildDocument());
  return built;
}

/** GET /openapi.json; open to anyone, as it describes the API and holds no data. */
export function openApiRouter(): Router {
  const router = express.Router();
  let body: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    body ??= JSON.stringify(openApiDocument());
    res.set('Cache-Control', 'no-cache').type('application/json').send(body);
  });
  router.all('/openapi.json', methodNotAllowed(['GET']));
  return router;
}
