// The OpenEnv WebSocket messages (openenv-core 0.2.x, env_server/types.py), and the checks that turn
// the server's text into one of them. One connection is one environment; every client message but
// `close` gets exactly one reply, in order; the server answers `close` by closing the socket.
import { OpenEnvProtocolError } from './errors.js';

export type JsonObject = Record<string, unknown>;

export type ClientMessage = { type: 'reset'; data: JsonObject } | { type: 'step'; data: JsonObject } | { type: 'state' } | { type: 'close' };

/** An observation reply (to reset and step): serialize_observation's shape. */
export interface ObservationData {
  /** The observation's own fields (reward, done and metadata are lifted out of it). */
  readonly observation: JsonObject;
  readonly reward: number | null;
  readonly done: boolean;
  /** Newer servers lift the observation's metadata next to it when it is not empty. */
  readonly metadata?: JsonObject;
}

export interface StateData extends JsonObject {
  readonly episode_id?: string | null;
  readonly step_count: number;
}

export interface ErrorData extends JsonObject {
  readonly message: string;
  readonly code: string;
}

export type ServerMessage = { type: 'observation'; data: ObservationData } | { type: 'state'; data: StateData } | { type: 'error'; data: ErrorData };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function parseServerMessage(text: string): ServerMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OpenEnvProtocolError(`the server sent text that is not JSON: ${text.slice(0, 200)}`);
  }
  if (!isObject(parsed) || !isObject(parsed.data)) {
    throw new OpenEnvProtocolError(`the server sent a message without a "data" object: ${text.slice(0, 200)}`);
  }
  const data = parsed.data;
  switch (parsed.type) {
    case 'observation': {
      const { observation, reward, done, metadata } = data;
      if (!isObject(observation)) throw new OpenEnvProtocolError('observation message: data.observation is not an object');
      // Python's bool is an int subclass and pydantic allows bool rewards: accept true/false as 1/0.
      const numeric = typeof reward === 'boolean' ? Number(reward) : reward;
      if (numeric !== null && numeric !== undefined && (typeof numeric !== 'number' || !Number.isFinite(numeric))) {
        throw new OpenEnvProtocolError(`observation message: data.reward is ${JSON.stringify(reward)}, not a finite number or null`);
      }
      if (typeof done !== 'boolean') throw new OpenEnvProtocolError(`observation message: data.done is ${JSON.stringify(done)}, not a boolean`);
      return {
        type: 'observation',
        data: { observation, reward: numeric ?? null, done, ...(isObject(metadata) ? { metadata } : {}) },
      };
    }
    case 'state': {
      const stepCount = data.step_count ?? 0;
      if (typeof stepCount !== 'number') throw new OpenEnvProtocolError('state message: data.step_count is not a number');
      return { type: 'state', data: { ...data, step_count: stepCount } };
    }
    case 'error':
      return {
        type: 'error',
        data: {
          ...data,
          message: typeof data.message === 'string' ? data.message : JSON.stringify(data.message ?? null),
          code: typeof data.code === 'string' ? data.code : 'UNKNOWN',
        },
      };
    default:
      throw new OpenEnvProtocolError(`the server sent a message of unknown type ${JSON.stringify(parsed.type)}`);
  }
}
