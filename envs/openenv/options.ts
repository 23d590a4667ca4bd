// Options of the OpenEnv adapter and what each defaults to.
import type { ActionFromText } from './mapping.js';
import type { JsonObject } from './protocol.js';
import type { OpenSocket } from './websocket/index.js';

/** What a `done` observation is reported as. OpenEnv has one `done`; Gymnasium (and trajflow) split it. */
export type DoneKind = 'terminated' | 'truncated';

export interface DoneContext {
  readonly observation: JsonObject;
  /** The reply's `metadata` (absent on servers that keep it inside the observation, or when empty). */
  readonly metadata: JsonObject | undefined;
  readonly reward: number | null;
  /** Steps the server executed in this episode, this one included (invalid turns are never sent). */
  readonly serverSteps: number;
}

export interface SuccessContext {
  readonly observation: JsonObject;
  /** This step's reward (null from the server counts as 0). */
  readonly reward: number;
  readonly terminated: boolean;
  readonly truncated: boolean;
}

export interface OpenEnvOptions {
  /** The server's base URL, http(s)://host:port[/prefix]; the episodes run over ws(s)://host:port[/prefix]/ws. */
  readonly url: string;
  /** Overrides /metadata's name and version (EnvId, and envName/envVersion of the step events). Version default 'v0'. */
  readonly name?: string;
  readonly version?: string;
  /** Our own turn limit: a turn that reaches it without `done` is truncated. Default 20. */
  readonly maxTurns?: number;
  /** The action field the default actionFromText fills with the <answer> text. Default 'message'. Checked against /schema. */
  readonly actionField?: string;
  /** Policy text -> action fields; null = invalid action (not sent). Default: <answer> content into `actionField`. */
  readonly actionFromText?: ActionFromText;
  /** Observation fields tried in order by the default observationToText. Default ['text', 'prompt', 'message']. */
  readonly observationFields?: readonly string[];
  /** Observation object -> the text the policy sees. Default: the first string among `observationFields`, else canonical JSON. */
  readonly observationToText?: (observation: JsonObject) => string;
  /** Observation -> state key (GiGPO anchors). Default: canonical JSON (sorted keys) of the observation object. */
  readonly stateKey?: (observation: JsonObject) => string;
  /**
   * The server's own step limit, when it has one. A `done` on that server step (or later) is reported as
   * truncated, unless classifyDone is given. Default: none.
   */
  readonly serverStepLimit?: number;
  /**
   * Decides what a `done` means. Default: truncated when the observation or the reply's metadata has
   * `truncated: true`, or when serverSteps >= serverStepLimit; terminated otherwise.
   */
  readonly classifyDone?: (done: DoneContext) => DoneKind;
  /** Whether an ended episode succeeded (metrics.success). Default: terminated with a reward > 0 on the last step. */
  readonly successOf?: (end: SuccessContext) => boolean;
  /** Extra reset fields besides the seed (a task id, a difficulty …). Default: { seed }. */
  readonly resetData?: (seed: number) => JsonObject;
  readonly systemPrompt?: string;
  /** The words of the action language (for the system prompt and the random policy). Default: none. */
  readonly actionVocabulary?: readonly string[];
  /** Concrete valid actions for the current observation (for the random policy). Default: actionVocabulary. */
  readonly validActions?: (observation: JsonObject) => readonly string[];
  /** Per request (each HTTP GET, each WebSocket request). Default 30 000 ms. */
  readonly requestTimeoutMs?: number;
  /** The WebSocket transport. Default: the built-in RFC 6455 client (websocket/client.ts). */
  readonly openSocket?: OpenSocket;
}

export const OPENENV_DEFAULTS = {
  maxTurns: 20,
  actionField: 'message',
  version: 'v0',
  requestTimeoutMs: 30_000,
} as const;

export function defaultClassifyDone(serverStepLimit: number | undefined): (done: DoneContext) => DoneKind {
  return ({ observation, metadata, serverSteps }) => {
    if (observation.truncated === true || metadata?.truncated === true) return 'truncated';
    if (serverStepLimit !== undefined && serverSteps >= serverStepLimit) return 'truncated';
    return 'terminated';
  };
}

export function defaultSuccessOf({ reward, terminated }: SuccessContext): boolean {
  return terminated && reward > 0;
}
