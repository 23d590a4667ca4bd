// Semantic checks beyond what the Avro schema can say (lengths that must agree, log-probs <= 0, ids
// not empty ...). The SDK publisher runs them before sending and the consumers after decoding; a
// failing event goes to the dead-letter topic. Each check returns the first problem found.
//
// Measurements (losses, entropy, metrics maps, alert values) may be NaN or infinite on purpose: a NaN
// loss is exactly what the collapse detector must see, so it is not rejected here.
//
// Beyond the semantic rules, every number must be one its Avro type holds as it is: an int within 32 bits,
// a long a safe integer (avsc writes JS numbers), a float finite and within float32's range (a log-prob of
// -1e39 would become -Infinity on the wire, which consumers then dead-letter: the value sent is not the
// value validated). Doubles hold any JS number. So what passes here encodes to exactly what was checked.
// Likewise every string, map keys included, must be well-formed Unicode: a lone UTF-16 surrogate has no
// UTF-8 encoding, and avsc writes it as bytes that are not UTF-8 (ED A0 80), which strict decoders
// (Python's, for one) refuse. A decoded string is always well-formed, so consumers never refuse one for this.
import type {
  CollapseAlertEvent,
  DeadLetterEvent,
  EvaluationEvent,
  EventName,
  EventTypes,
  LearnerStepEvent,
  PolicyVersionEvent,
  RolloutStatsEvent,
  StepEvent,
  TrainingSampleEvent,
  TrajectoryEvent,
  TrajectoryStep,
} from './generated/types.js';
import { ID_DESCRIPTION, ID_PATTERN } from './ids.js';
import { announcedGroupSize, GROUP_SIZE_INFO_KEY } from './group-size.js';

export type ValidationResult = { ok: true } | { ok: false; field: string; message: string };

const OK: ValidationResult = Object.freeze({ ok: true });

/** Thrown inside the checks to stop at the first problem; never escapes validateEvent. */
class Invalid {
  constructor(
    readonly field: string,
    readonly message: string,
  ) {}
}

function fail(field: string, message: string): never {
  throw new Invalid(field, message);
}

interface WellFormed {
  isWellFormed(): boolean;
}

/** A string UTF-8 can encode: no lone UTF-16 surrogate (String.prototype.isWellFormed, Node 20). */
function wellFormed(value: string): boolean {
  return (value as unknown as WellFormed).isWellFormed();
}

function illFormed(value: string): string {
  const at = value.search(/[\uD800-\uDFFF]/u);
  const unit = value.charCodeAt(at).toString(16);
  return `is not well-formed Unicode: a lone UTF-16 surrogate (\\u${unit}) at index ${at}, which UTF-8 cannot encode`;
}

function text(field: string, value: string, prefix = ''): void {
  if (!wellFormed(value)) fail(prefix + field, illFormed(value));
}

function nonEmpty(field: string, value: string): void {
  if (value.length === 0) fail(field, 'must not be empty');
  text(field, value);
}

function id(field: string, value: string): void {
  if (!ID_PATTERN.test(value))
    fail(field, value === '' ? 'must not be empty' : `must be ${ID_DESCRIPTION}, got ${shown(value)}${value.length > 40 ? ` (${value.length} characters)` : ''}`);
}

/** The keys of a map are strings too. */
function keys(field: string, map: Readonly<Record<string, unknown>>): void {
  for (const key of Object.keys(map)) if (!wellFormed(key)) fail(field, `has a key that ${illFormed(key)}`);
}

/** A string as a message shows it: quoted, cut at 40 characters, a lone surrogate escaped (JSON.stringify does). */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value);
}

/** A map of strings: its keys and its values. */
function textMap(field: string, map: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(map)) {
    if (!wellFormed(key)) fail(field, `has a key that ${illFormed(key)}`);
    text(`${field}${mapKey(key)}`, map[key]!);
  }
}

// `prefix` (a trajectory step's "steps[i].") is joined to the field name only when a check fails: every
// trajectory the processors write is validated, and building each field's path up front was a visible share
// of the processors' allocations (docs/results/processors.md).

const INT32_MAX = 2 ** 31 - 1;
/** The largest finite float32 (Math.fround of anything beyond its rounding range is ±Infinity). */
export const FLOAT32_MAX = 3.4028234663852886e38;

/** An Avro int >= 0: an integer up to 2^31 - 1. */
function nonNegativeInt(field: string, value: number, prefix = ''): void {
  if (!Number.isInteger(value) || value < 0 || value > INT32_MAX) fail(prefix + field, `must be an integer >= 0 (an int: at most ${INT32_MAX}), got ${value}`);
}

/**
 * The largest long avsc writes: it reads and writes longs as JS numbers and refuses 2^53 - 1 itself (its
 * isSafeLong stops at 2^53 - 2), so a long checked only with Number.isSafeInteger could still fail to encode.
 */
export const LONG_MAX = 9_007_199_254_740_990;

function isLong(value: number): boolean {
  return Number.isInteger(value) && value <= LONG_MAX && value >= -LONG_MAX;
}

/** An Avro long >= 0: an integer up to LONG_MAX. */
function nonNegativeLong(field: string, value: number, prefix = ''): void {
  if (!isLong(value) || value < 0) fail(prefix + field, `must be an integer >= 0 (a long: at most ${LONG_MAX}), got ${value}`);
}

/** An Avro int of any sign. */
function int32(field: string, value: number): void {
  if (!Number.isInteger(value) || value < -INT32_MAX - 1 || value > INT32_MAX) fail(field, `must be an integer within 32 bits (an int), got ${value}`);
}

/** An Avro float: finite and within float32's range (NaN and ±Infinity are refused too). */
function float32(field: string, value: number): void {
  if (!(Math.abs(value) <= FLOAT32_MAX)) fail(field, `must be a finite float32 (within ±${FLOAT32_MAX}), got ${value}`);
}

function finite(field: string, value: number, prefix = ''): void {
  if (!Number.isFinite(value)) fail(prefix + field, `must be finite, got ${value}`);
}

/**
 * The latest time every consumer can read: the times are Avro timestamp-millis, which Python's avro decodes into
 * a datetime, and a datetime ends at 9999-12-31T23:59:59.999Z — a later one made the whole event undecodable there
 * (OverflowError), a poison message for any Python consumer.
 */
export const MAX_EVENT_TIME_MS = 253_402_300_799_999;

function eventTime(field: string, value: number, prefix = ''): void {
  if (!isLong(value) || value <= 0) fail(prefix + field, `must be a positive epoch time in ms, got ${value}`);
  if (value > MAX_EVENT_TIME_MS)
    fail(prefix + field, `must be at most ${MAX_EVENT_TIME_MS} (9999-12-31T23:59:59.999Z, the last time a timestamp-millis decodes to in every language), got ${value}`);
}

/** A string holding one JSON object (not an array, not null), as options are passed around. */
function jsonObject(field: string, text: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    fail(field, `must be a JSON object, got ${shown(text)} (not JSON)`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) fail(field, `must be a JSON object, got ${shown(text)}`);
}

/** How a map entry is named in a field path, as schemas/invalid.ts prints avsc's paths: `.loss`, `["a b"]`. */
function mapKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function sameLength(field: string, actual: readonly unknown[], expected: number, of: string, prefix = ''): void {
  if (actual.length !== expected) fail(prefix + field, `has ${actual.length} entries, ${of} has ${expected}`);
}

function tokenIds(field: string, ids: readonly number[], prefix = ''): void {
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (!Number.isInteger(id) || id < 0 || id > INT32_MAX) fail(`${prefix}${field}[${i}]`, `token id must be an integer >= 0 (an int: at most ${INT32_MAX}), got ${id}`);
  }
}

function logProbs(field: string, values: readonly number[], prefix = ''): void {
  for (let i = 0; i < values.length; i++) {
    const lp = values[i]!;
    // A log-probability is log p with 0 < p <= 1: finite and at most 0; a float, so not below -FLOAT32_MAX.
    if (!(lp <= 0 && lp >= -FLOAT32_MAX)) fail(`${prefix}${field}[${i}]`, logProbMessage(lp));
  }
}

function logProbMessage(lp: number): string {
  return lp < -FLOAT32_MAX && lp > -Infinity ? `log-prob must be a finite float32 (at least -${FLOAT32_MAX}), got ${lp}` : `log-prob must be finite and <= 0, got ${lp}`;
}

function action(prefix: string, s: Pick<StepEvent, 'observation' | 'action' | 'actionTokenIds' | 'actionLogProbs' | 'observationTokenIds'>): void {
  text('observation', s.observation, prefix);
  text('action', s.action, prefix);
  if (s.observationTokenIds !== null) tokenIds('observationTokenIds', s.observationTokenIds, prefix);
  tokenIds('actionTokenIds', s.actionTokenIds, prefix);
  sameLength('actionLogProbs', s.actionLogProbs, s.actionTokenIds.length, 'actionTokenIds', prefix);
  logProbs('actionLogProbs', s.actionLogProbs, prefix);
}

function checkStep(s: StepEvent): void {
  checkStepIdentity(s);
  action('', s);
  checkStepOutcome(s);
}

// checkStep without the token arrays and log-probs, in the same order: wire-step.ts checks those on the bytes.
function checkStepScalars(s: StepEvent): void {
  checkStepIdentity(s);
  checkStepOutcome(s);
}

function checkStepIdentity(s: StepEvent): void {
  nonEmpty('eventId', s.eventId);
  nonEmpty('runId', s.runId);
  nonEmpty('envName', s.envName);
  nonEmpty('envVersion', s.envVersion);
  nonEmpty('groupId', s.groupId);
  nonEmpty('episodeId', s.episodeId);
  nonNegativeInt('stepIndex', s.stepIndex);
}

function checkStepOutcome(s: StepEvent): void {
  nonNegativeLong('policyVersion', s.policyVersion);
  finite('reward', s.reward);
  // terminated && truncated is allowed: Gymnasium lets an env report both on the same step.
  if (s.stateKey !== null) nonEmpty('stateKey', s.stateKey);
  keys('metrics', s.metrics);
  textMap('info', s.info);
  eventTime('eventTimeMs', s.eventTimeMs);
}

function checkTrajectoryStep(prefix: string, s: TrajectoryStep, t: TrajectoryEvent): void {
  nonNegativeInt('stepIndex', s.stepIndex, prefix);
  action(prefix, s);
  nonNegativeLong('policyVersion', s.policyVersion, prefix);
  if (s.policyVersion < t.minPolicyVersion || s.policyVersion > t.maxPolicyVersion) {
    fail(`${prefix}policyVersion`, `${s.policyVersion} is outside [minPolicyVersion, maxPolicyVersion] = [${t.minPolicyVersion}, ${t.maxPolicyVersion}]`);
  }
  finite('reward', s.reward, prefix);
  if (s.stateKey !== null) text('stateKey', s.stateKey, prefix);
  eventTime('eventTimeMs', s.eventTimeMs, prefix);
}

function checkTrajectory(t: TrajectoryEvent): void {
  nonEmpty('runId', t.runId);
  nonEmpty('envName', t.envName);
  nonEmpty('envVersion', t.envVersion);
  nonEmpty('groupId', t.groupId);
  nonEmpty('episodeId', t.episodeId);
  nonEmpty('outcome', t.outcome); // any string: new outcomes must not be dead-lettered by old consumers
  nonNegativeInt('stepCount', t.stepCount);
  if (t.stepCount !== t.steps.length) fail('stepCount', `is ${t.stepCount} but steps has ${t.steps.length} entries`);
  finite('totalReward', t.totalReward);
  nonNegativeInt('invalidActions', t.invalidActions);
  if (t.invalidActions > t.stepCount) fail('invalidActions', `${t.invalidActions} is more than stepCount (${t.stepCount})`);
  nonNegativeInt('gapCount', t.gapCount);
  nonNegativeLong('minPolicyVersion', t.minPolicyVersion);
  nonNegativeLong('maxPolicyVersion', t.maxPolicyVersion);
  if (t.maxPolicyVersion < t.minPolicyVersion) fail('maxPolicyVersion', `${t.maxPolicyVersion} is below minPolicyVersion (${t.minPolicyVersion})`);
  eventTime('firstEventTimeMs', t.firstEventTimeMs);
  eventTime('lastEventTimeMs', t.lastEventTimeMs);
  if (t.lastEventTimeMs < t.firstEventTimeMs) fail('lastEventTimeMs', 'is before firstEventTimeMs');
  let previous = -1;
  for (let i = 0; i < t.steps.length; i++) {
    const step = t.steps[i]!;
    checkTrajectoryStep(`steps[${i}].`, step, t);
    if (step.stepIndex <= previous) fail(`steps[${i}].stepIndex`, `${step.stepIndex} does not increase (previous ${previous})`);
    previous = step.stepIndex;
  }
  keys('metrics', t.metrics);
}

function checkSample(s: TrainingSampleEvent): void {
  nonEmpty('sampleId', s.sampleId);
  nonEmpty('runId', s.runId);
  nonEmpty('groupId', s.groupId);
  nonEmpty('episodeId', s.episodeId);
  nonNegativeLong('policyVersion', s.policyVersion);
  if (s.tokenIds.length === 0) fail('tokenIds', 'must not be empty');
  tokenIds('tokenIds', s.tokenIds);
  const n = s.tokenIds.length;
  sameLength('lossMask', s.lossMask, n, 'tokenIds');
  sameLength('advantages', s.advantages, n, 'tokenIds');
  sameLength('behaviourLogProbs', s.behaviourLogProbs, n, 'tokenIds');
  let inLoss = 0;
  for (let i = 0; i < n; i++) {
    const mask = s.lossMask[i]!;
    if (mask !== 0 && mask !== 1) fail(`lossMask[${i}]`, `must be 0 or 1, got ${mask}`);
    inLoss += mask;
    float32(`advantages[${i}]`, s.advantages[i]!);
    const lp = s.behaviourLogProbs[i]!;
    if (mask === 0 && lp !== 0) fail(`behaviourLogProbs[${i}]`, `must be 0 where lossMask is 0, got ${lp}`);
    if (!(lp <= 0 && lp >= -FLOAT32_MAX)) fail(`behaviourLogProbs[${i}]`, logProbMessage(lp));
  }
  if (inLoss === 0) fail('lossMask', 'has no 1: the sample has no policy tokens to train on');
  finite('reward', s.reward);
  nonEmpty('estimator', s.estimator);
  if (!Number.isInteger(s.groupSize) || s.groupSize < 1 || s.groupSize > INT32_MAX) fail('groupSize', `must be an integer >= 1 (an int), got ${s.groupSize}`);
  finite('groupRewardMean', s.groupRewardMean);
  finite('groupRewardStd', s.groupRewardStd);
  if (s.groupRewardStd < 0) fail('groupRewardStd', `must be >= 0, got ${s.groupRewardStd}`);
  if (s.stepAdvantages !== null) s.stepAdvantages.forEach((a, i) => float32(`stepAdvantages[${i}]`, a));
  eventTime('eventTimeMs', s.eventTimeMs);
  // Absent in a v1 sample (the reader's default): the learner then batches it by its token budget.
  const batch = s.batch ?? null;
  if (batch !== null) {
    nonEmpty('batch.batchId', batch.batchId);
    if (!isLong(batch.iteration) || batch.iteration < -1) fail('batch.iteration', `must be an integer >= -1 (-1: no iteration named), got ${batch.iteration}`);
    if (!Number.isInteger(batch.samples) || batch.samples < 1 || batch.samples > INT32_MAX)
      fail('batch.samples', `must be an integer >= 1 (the batch's samples, this one included), got ${batch.samples}`);
  }
}

function checkLearnerStep(l: LearnerStepEvent): void {
  nonEmpty('runId', l.runId);
  nonNegativeLong('step', l.step);
  nonNegativeLong('policyVersion', l.policyVersion);
  // Loss parts, entropy, KL and gradient norm are measurements: NaN/Infinity pass (see the header).
  const fraction = (field: string, value: number) => {
    if (value < 0 || value > 1) fail(field, `must be within [0, 1], got ${value}`);
  };
  fraction('clipFraction', l.clipFraction);
  if (l.clipFractionLow !== null) fraction('clipFractionLow', l.clipFractionLow);
  finite('learningRate', l.learningRate);
  if (l.learningRate < 0) fail('learningRate', `must be >= 0, got ${l.learningRate}`);
  nonNegativeLong('tokens', l.tokens);
  nonNegativeInt('samples', l.samples);
  nonNegativeLong('stalenessMax', l.stalenessMax);
  if (l.stalenessMean < 0) fail('stalenessMean', `must be >= 0, got ${l.stalenessMean}`);
  if (l.durationMs < 0) fail('durationMs', `must be >= 0, got ${l.durationMs}`);
  nonEmpty('backend', l.backend);
  keys('metrics', l.metrics);
  eventTime('eventTimeMs', l.eventTimeMs);
}

function checkPolicyVersion(p: PolicyVersionEvent): void {
  nonEmpty('runId', p.runId);
  nonNegativeLong('version', p.version);
  nonEmpty('weightsUri', p.weightsUri);
  if (!/^[0-9a-f]{64}$/.test(p.checksum)) fail('checksum', 'must be a SHA-256 as 64 lowercase hex digits');
  if (p.parentVersion !== null) {
    nonNegativeLong('parentVersion', p.parentVersion);
    if (p.parentVersion >= p.version) fail('parentVersion', `${p.parentVersion} must be below version (${p.version})`);
  }
  nonNegativeLong('learnerStep', p.learnerStep);
  eventTime('createdAtMs', p.createdAtMs);
  keys('metrics', p.metrics);
}

const SEVERITIES = new Set(['info', 'warning', 'critical']);

function checkCollapseAlert(a: CollapseAlertEvent): void {
  nonEmpty('alertId', a.alertId);
  nonEmpty('runId', a.runId);
  nonEmpty('kind', a.kind); // any string: new detectors must not be dead-lettered by old consumers
  if (!SEVERITIES.has(a.severity)) fail('severity', `must be one of ${[...SEVERITIES].join(', ')}, got ${shown(a.severity)}`);
  nonNegativeLong('learnerStep', a.learnerStep);
  nonNegativeLong('policyVersion', a.policyVersion);
  nonEmpty('message', a.message);
  keys('evidence', a.evidence);
  eventTime('eventTimeMs', a.eventTimeMs);
}

function checkDeadLetter(d: DeadLetterEvent): void {
  nonEmpty('reason', d.reason);
  text('detail', d.detail);
  nonEmpty('sourceTopic', d.sourceTopic);
  // -1 marks a record that did not come from Kafka (see the schema docs).
  if (!Number.isInteger(d.sourcePartition) || d.sourcePartition < -1 || d.sourcePartition > INT32_MAX)
    fail('sourcePartition', `must be an integer >= -1, got ${d.sourcePartition}`);
  if (!isLong(d.sourceOffset) || d.sourceOffset < -1) fail('sourceOffset', `must be an integer >= -1, got ${d.sourceOffset}`);
  eventTime('eventTimeMs', d.eventTimeMs);
}

const SCOPES = new Set(['batch', 'group']);

function checkRolloutStats(r: RolloutStatsEvent): void {
  nonEmpty('runId', r.runId);
  if (!SCOPES.has(r.scope)) fail('scope', `must be 'batch' or 'group', got ${shown(r.scope)}`);
  nonEmpty('batchId', r.batchId);
  if (r.scope === 'group' && (r.groupId === null || r.groupId === '')) fail('groupId', "is required when scope is 'group'");
  if (r.groupId !== null) text('groupId', r.groupId);
  nonNegativeInt('groups', r.groups);
  nonNegativeInt('trajectories', r.trajectories);
  for (const [field, rate] of [
    ['successRate', r.successRate],
    ['invalidActionRate', r.invalidActionRate],
  ] as const) {
    if (!(rate >= 0 && rate <= 1)) fail(field, `must be a fraction in [0, 1], got ${rate}`);
  }
  nonNegativeInt('incomplete', r.incomplete);
  nonNegativeInt('droppedGroups', r.droppedGroups);
  keys('passAtK', r.passAtK);
  keys('passHatK', r.passHatK);
  keys('droppedByReason', r.droppedByReason);
  for (const [reason, count] of Object.entries(r.droppedByReason)) int32(`droppedByReason${mapKey(reason)}`, count);
  eventTime('eventTimeMs', r.eventTimeMs);
  // Absent in a v1 event (the reader's default {}).
  const closedBy = r.closedBy ?? {};
  keys('closedBy', closedBy);
  for (const [reason, count] of Object.entries(closedBy)) nonNegativeInt(`closedBy${mapKey(reason)}`, count);
}

function checkEvaluation(e: EvaluationEvent): void {
  nonEmpty('runId', e.runId);
  nonNegativeLong('policyVersion', e.policyVersion);
  // -1 marks what the evaluator could not know (no iteration trained on, env steps unknown): see the schema docs.
  if (!isLong(e.trainedIteration) || e.trainedIteration < -1) fail('trainedIteration', `must be an integer >= -1 (-1: none), got ${e.trainedIteration}`);
  if (!isLong(e.envSteps) || e.envSteps < -1) fail('envSteps', `must be an integer >= -1 (-1: unknown), got ${e.envSteps}`);
  nonEmpty('envName', e.envName);
  text('envOptions', e.envOptions);
  jsonObject('envOptions', e.envOptions);
  if (!Number.isInteger(e.tasks) || e.tasks < 1 || e.tasks > INT32_MAX) fail('tasks', `must be an integer >= 1, got ${e.tasks}`);
  // Written as !(in range) so that NaN fails too: a success rate is a count over tasks, never a measurement gone wrong.
  for (const [field, rate] of [
    ['greedySuccess', e.greedySuccess],
    ['randomSuccess', e.randomSuccess],
  ] as const) {
    if (!(rate >= 0 && rate <= 1)) fail(field, `must be a fraction in [0, 1], got ${rate}`);
  }
  finite('meanReward', e.meanReward);
  finite('meanSteps', e.meanSteps);
  finite('durationMs', e.durationMs);
  if (e.durationMs < 0) fail('durationMs', `must be >= 0, got ${e.durationMs}`);
  eventTime('eventTimeMs', e.eventTimeMs);
}

const CHECKS: { [N in EventName]: (value: EventTypes[N]) => void } = {
  rollout_stats: checkRolloutStats,
  step: checkStep,
  trajectory: checkTrajectory,
  sample: checkSample,
  learner_step: checkLearnerStep,
  policy_version: checkPolicyVersion,
  collapse_alert: checkCollapseAlert,
  dead_letter: checkDeadLetter,
  evaluation: checkEvaluation,
};

/**
 * Semantic checks of a value that already fits its Avro schema (decoded, or about to be encoded).
 * `field` is a dotted path like `actionLogProbs[3]` or `steps[2].reward`.
 */
export function validateEvent<N extends EventName>(event: N, value: EventTypes[N]): ValidationResult {
  return resultOf(event, () => (CHECKS[event] as (value: EventTypes[N]) => void)(value));
}

/**
 * The rules for a step entering the system (POST /v1/steps; the SDK's publisher should use it too):
 * validateEvent's, and ids of the read API's grammar (schemas/ids.ts) — a run or episode with any other id
 * could be ingested but never read back, and its group never filtered on. Only where steps come in: the
 * consumers keep validateEvent's rules, so steps already in Kafka are not dead-lettered for their ids (and
 * the sink's step transcoder, which must accept exactly what the consumers accept, need not know the grammar).
 */
export function validateIngestStep(s: StepEvent): ValidationResult {
  return resultOf('step', () => {
    checkStep(s);
    id('eventId', s.eventId);
    id('runId', s.runId);
    id('groupId', s.groupId);
    id('episodeId', s.episodeId);
    const size = announcedGroupSize(s.info);
    if (typeof size === 'object') fail(`info.${GROUP_SIZE_INFO_KEY}`, size.error);
  });
}

/** validateEvent('step', s) without reading the token arrays and log-probs (a WireStep has checked those on its bytes). */
export function validateStepScalars(s: StepEvent): ValidationResult {
  return resultOf('step', () => checkStepScalars(s));
}

function resultOf(event: EventName, check: () => void): ValidationResult {
  try {
    check();
    return OK;
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, field: err.field, message: err.message };
    // A value that does not fit the schema (e.g. a missing array) is reported, not thrown.
    return { ok: false, field: '', message: `not a valid ${event} event: ${(err as Error).message}` };
  }
}
