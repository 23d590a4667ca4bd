// checkEnv: Gymnasium's env_checker for our contract. Pass a freshly created
// environment; it is reset and stepped many times. Throws EnvCheckError naming the first broken rule.
import type { TrajflowError } from '../core/errors.js';
import { formatReply } from './actions.js';
import type { Environment, ResetResult, StepResult } from './contract.js';
import { EnvCheckError, EpisodeOverError, ResetNeededError } from './errors.js';
import { Rng, RngStream } from '../core/rng.js';

export interface CheckEnvOptions {
  /** Seeds to play one random episode from each (default: 3 seeds). */
  seeds?: readonly number[];
}

interface Transcript {
  reset: ResetResult;
  actions: string[];
  steps: StepResult[];
}

const INVALID_REPLIES = ['no tags at all', '<answer></answer>', '<answer>definitely-not-an-action-xyz</answer>', '<think>unclosed'];

type Fail = (check: string, detail: string) => never;

export function checkEnv(env: Environment, options: CheckEnvOptions = {}): void {
  const name = env.id?.name ?? '(unnamed)';
  const fail: Fail = (check, detail) => {
    throw new EnvCheckError(name, check, detail);
  };
  checkIdentityAndLimits(env, fail);
  // Order enforcing: step before reset.
  expectThrow(fail, 'step before reset', () => env.step(formatReply([env.actionVocabulary[0] ?? 'x'])), ResetNeededError);
  checkPromptAndVocabulary(env, fail);
  const seeds = options.seeds ?? [0, 1, 1_000_000_007];
  for (const seed of seeds) checkEpisodeAndReplay(env, seed, fail);
  // Invalid replies are reported, not thrown, and leave the state unchanged.
  for (const reply of INVALID_REPLIES) checkInvalidReply(env, seeds[0] ?? 0, reply, fail);
  // reset in the middle of an episode starts afresh.
  const fresh = env.reset(seeds[0] ?? 0);
  checkResetShape(fresh, fail);
}

function expectThrow(fail: Fail, check: string, run: () => unknown, errorClass: new (...args: never[]) => TrajflowError): void {
  try {
    run();
  } catch (error) {
    if (error instanceof errorClass) return;
    fail(check, `expected ${errorClass.name}, got ${String(error)}`);
  }
  fail(check, `expected ${errorClass.name}, nothing was thrown`);
}

function checkIdentityAndLimits(env: Environment, fail: Fail): void {
  if (typeof env.id?.name !== 'string' || env.id.name === '' || typeof env.id.version !== 'string' || env.id.version === '') {
    fail('id', 'id must have a non-empty name and version');
  }
  for (const limit of ['maxTurns', 'maxActionsPerTurn'] as const) {
    if (!Number.isInteger(env[limit]) || env[limit] < 1) fail(limit, `must be a positive integer, got ${String(env[limit])}`);
  }
}

function checkPromptAndVocabulary(env: Environment, fail: Fail): void {
  const prompt = env.systemPrompt();
  if (typeof prompt !== 'string' || prompt.trim() === '') fail('systemPrompt', 'must be a non-empty string');
  if (!Array.isArray(env.actionVocabulary) || env.actionVocabulary.length === 0) fail('actionVocabulary', 'must list at least one action');
  for (const word of env.actionVocabulary) {
    if (!prompt.includes(word)) fail('systemPrompt', `does not mention the action ${JSON.stringify(word)}`);
  }
  if (!prompt.includes('<answer>')) fail('systemPrompt', 'does not show the <answer>…</answer> format');
}

/** One random episode from `seed`, a step after its end, then the same episode again: it must be identical. */
function checkEpisodeAndReplay(env: Environment, seed: number, fail: Fail): void {
  const first = playRandomEpisode(env, seed, fail);
  // Step after the end.
  expectThrow(fail, 'step after the episode ended', () => env.step(first.actions.at(-1) ?? ''), EpisodeOverError);
  // Determinism: the same seed and the same replies give the same results.
  const reset = env.reset(seed);
  if (JSON.stringify(reset) !== JSON.stringify(first.reset)) fail('determinism', `reset(${seed}) differs between two calls`);
  first.actions.forEach((action, t) => {
    const again = env.step(action);
    if (JSON.stringify(again) !== JSON.stringify(first.steps[t])) {
      fail('determinism', `seed ${seed}, step ${t}: ${JSON.stringify(again)} differs from ${JSON.stringify(first.steps[t])}`);
    }
  });
}

/** An invalid reply is reported with actionValid: false, not thrown, and changes nothing. */
function checkInvalidReply(env: Environment, seed: number, reply: string, fail: Fail): void {
  const reset = env.reset(seed);
  const renderBefore = env.render();
  let result: StepResult;
  try {
    result = env.step(reply);
  } catch (error) {
    fail('invalid action', `step(${JSON.stringify(reply)}) threw ${String(error)}; it must report actionValid: false`);
  }
  checkStepShape(result, fail);
  if (result.actionValid) fail('invalid action', `step(${JSON.stringify(reply)}) reported actionValid: true`);
  if (result.stateKey !== reset.stateKey) fail('invalid action', `step(${JSON.stringify(reply)}) changed the state key`);
  if (env.render() !== renderBefore) fail('invalid action', `step(${JSON.stringify(reply)}) changed the rendering`);
  if (result.reward !== 0) fail('invalid action', `step(${JSON.stringify(reply)}) gave reward ${result.reward}; an invalid turn executes nothing`);
}

function isStringRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
}

function checkResetShape(reset: ResetResult, fail: Fail): void {
  if (typeof reset?.observation !== 'string' || reset.observation === '') fail('reset', 'observation must be a non-empty string');
  if (typeof reset.stateKey !== 'string' || reset.stateKey === '') fail('reset', 'stateKey must be a non-empty string');
  if (!isStringRecord(reset.info)) fail('reset', 'info must map names to strings');
}

function checkStepShape(step: StepResult, fail: Fail): void {
  if (typeof step?.observation !== 'string' || step.observation === '') fail('step', 'observation must be a non-empty string');
  if (typeof step.reward !== 'number' || !Number.isFinite(step.reward)) fail('step', `reward must be finite, got ${String(step.reward)}`);
  for (const flag of ['terminated', 'truncated', 'actionValid'] as const) {
    if (typeof step[flag] !== 'boolean') fail('step', `${flag} must be a boolean`);
  }
  if (typeof step.stateKey !== 'string' || step.stateKey === '') fail('step', 'stateKey must be a non-empty string');
  if (!isStringRecord(step.info)) fail('step', 'info must map names to strings');
  const metrics = step.metrics as unknown;
  if (typeof metrics !== 'object' || metrics === null || !Object.values(metrics).every((v) => typeof v === 'number' && Number.isFinite(v))) {
    fail('step', 'metrics must map names to finite numbers');
  }
}

/** Plays one episode with random valid actions, checking every result; returns the transcript. */
function playRandomEpisode(env: Environment, seed: number, fail: Fail): Transcript {
  const rng = new Rng(seed, RngStream.check);
  const reset = env.reset(seed);
  checkResetShape(reset, fail);
  const render = env.render();
  if (typeof render !== 'string' || render.trim() === '') fail('render', 'must be a non-empty string after reset');
  const actions: string[] = [];
  const steps: StepResult[] = [];
  for (let turn = 1; ; turn++) {
    if (turn > env.maxTurns) fail('maxTurns', `the episode did not end within ${env.maxTurns} turns`);
    const valid = env.validActions();
    if (valid.length === 0) fail('validActions', 'no valid action in a running episode');
    const count = 1 + rng.int(env.maxActionsPerTurn);
    const reply = formatReply(
      Array.from({ length: count }, () => rng.pick(valid)),
      'checking',
    );
    const result = env.step(reply);
    actions.push(reply);
    steps.push(result);
    checkStepShape(result, fail);
    if (!result.actionValid) fail('valid action', `step(${JSON.stringify(reply)}) reported actionValid: false`);
    if (typeof env.render() !== 'string' || env.render() === '') fail('render', 'must be a non-empty string');
    const ended = result.terminated || result.truncated;
    if (ended && result.terminated && result.truncated) fail('step', 'terminated and truncated are both true');
    if (ended && result.metrics.success !== 0 && result.metrics.success !== 1) fail('success', 'the last step must carry metrics.success = 0 or 1');
    if (!ended && 'success' in result.metrics) fail('success', 'metrics.success belongs on the last step only');
    if (ended) return { reset, actions, steps };
  }
}
