// ADAPTER NOTES — why an asynchronous environment contract exists.
//
// envs/contract.ts's Environment is synchronous: reset() and step() return their results directly,
// which fits environments that run in-process. An environment behind a network protocol (OpenEnv's
// WebSocket, any HTTP service) can only answer later, and Node cannot block on I/O, so such an
// environment implements AsyncEnvironment instead: the same members and the same semantics (the
// lifecycle, terminated vs truncated, the state-key convention, invalid actions reported, never
// thrown), but reset() and step() return Promises, and close() releases the connection.
//
// Actors (and checkEnv-like helpers) that want to drive both kinds write their loop against
// AsyncEnvironment and wrap built-in environments with toAsyncEnvironment(); awaiting a built-in's
// result costs one microtask per step.
import type { Environment, EnvId, ResetResult, StepResult } from '../contract.js';

export interface AsyncEnvironment {
  /** Tells AsyncEnvironment from Environment at run time (see toAsyncEnvironment). */
  readonly isAsync: true;
  readonly id: EnvId;
  readonly maxTurns: number;
  readonly maxActionsPerTurn: number;
  readonly actionVocabulary: readonly string[];
  reset(seed: number): Promise<ResetResult>;
  step(actionText: string): Promise<StepResult>;
  render(): string;
  systemPrompt(): string;
  validActions(): readonly string[];
  /** Releases what the environment holds (a connection); reset/step afterwards throw. */
  close(): Promise<void>;
}

export function isAsyncEnvironment(env: Environment | AsyncEnvironment): env is AsyncEnvironment {
  return (env as Partial<AsyncEnvironment>).isAsync === true;
}

/** The same environment behind the asynchronous contract (an AsyncEnvironment is returned as it is). */
export function toAsyncEnvironment(env: Environment | AsyncEnvironment): AsyncEnvironment {
  if (isAsyncEnvironment(env)) return env;
  return {
    isAsync: true,
    get id() {
      return env.id;
    },
    get maxTurns() {
      return env.maxTurns;
    },
    get maxActionsPerTurn() {
      return env.maxActionsPerTurn;
    },
    get actionVocabulary() {
      return env.actionVocabulary;
    },
    // async functions turn a synchronous throw (ResetNeededError …) into a rejection, as a remote env would.
    reset: async (seed) => env.reset(seed),
    step: async (actionText) => env.step(actionText),
    render: () => env.render(),
    systemPrompt: () => env.systemPrompt(),
    validActions: () => env.validActions(),
    close: async () => {},
  };
}
