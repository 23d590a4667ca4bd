// An environment served by an OpenEnv server (openenv-core 0.2.x), behind trajflow's environment
// contract (asynchronous variant, see async-environment.ts).
//
// Protocol decisions:
// - Episodes run over the WebSocket /ws: one connection is one server-side environment, kept for the
//   adapter's lifetime (OpenEnv's POST /reset and /step are stateless and cannot carry an episode).
//   /health, /schema and /metadata are read once at connect time to reject a wrong URL or action field.
// - One step() is one turn and sends at most one action: maxActionsPerTurn is 1.
// - A reply the policy wrote with no usable action (actionFromText → null) is an invalid action:
//   reported as actionValid = false, nothing is sent, the state does not change. The server refusing
//   the action's fields (VALIDATION_ERROR, the WebSocket counterpart of HTTP's 422) is reported the
//   same way, with the server's message in info.problem. Both use up a turn.
// - Any other server error (EXECUTION_ERROR, SESSION_ERROR …) throws OpenEnvServerError with the
//   server's message and code: the episode cannot be trusted after it; reset() starts afresh.
// - OpenEnv's single `done` becomes terminated, or truncated when the server says so (`truncated: true`
//   in the observation or its metadata) or when the server's configured step limit is reached
//   (options.serverStepLimit); options.classifyDone overrides this. Our own maxTurns truncates too.
//   A null reward counts as 0.
// - If the connection dropped, the next reset() opens a new one (a new server-side environment);
//   step() does not, since the episode it belonged to is gone.
import type { EnvId, ResetResult, StepResult } from '../contract.js';
import { ResetNeededError } from '../errors.js';
import { EpisodeLifecycle } from '../lifecycle.js';
import type { AsyncEnvironment } from './async-environment.js';
import { OpenEnvClosedError, OpenEnvConcurrentCallError, OpenEnvProtocolError, OpenEnvSchemaError, OpenEnvServerError } from './errors.js';
import { DEFAULT_OBSERVATION_FIELDS, answerIntoField, canonicalJson, observationText, userMapping, type ActionMapping } from './mapping.js';
import { OPENENV_DEFAULTS, defaultClassifyDone, defaultSuccessOf, type OpenEnvOptions } from './options.js';
import type { JsonObject, ObservationData, ServerMessage, StateData } from './protocol.js';
import { actionFields, missingRequiredFields, probeServer, type OpenEnvServerInfo } from './server-info.js';
import { OpenEnvSession } from './session.js';
import { openWebSocket, type OpenSocket } from './websocket/index.js';

interface Current {
  readonly observation: JsonObject;
  readonly text: string;
  readonly stateKey: string;
}

/** http://h:p/x → ws://h:p/x/ws (https → wss). */
export function webSocketUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OpenEnvSchemaError(`OpenEnv url must be http(s)://…, got ${baseUrl}`);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ws`;
  return url.toString();
}

export class OpenEnvEnvironment implements AsyncEnvironment {
  readonly isAsync = true;
  readonly id: EnvId;
  readonly maxTurns: number;
  readonly maxActionsPerTurn = 1;
  readonly actionVocabulary: readonly string[];
  private readonly lifecycle: EpisodeLifecycle;
  private readonly mapAction: (text: string) => ActionMapping;
  private readonly toText: (observation: JsonObject) => string;
  private readonly toStateKey: (observation: JsonObject) => string;
  private readonly classifyDone;
  private readonly successOf;
  private readonly prompt: string;
  private current: Current | null = null;
  private serverSteps = 0;
  private running: 'reset' | 'step' | 'state' | null = null;
  private closed = false;

  /** Checks the server (/health, /schema, /metadata) and opens the episode connection. */
  static async connect(options: OpenEnvOptions): Promise<OpenEnvEnvironment> {
    const timeoutMs = options.requestTimeoutMs ?? OPENENV_DEFAULTS.requestTimeoutMs;
    const wsUrl = webSocketUrl(options.url);
    const info = await probeServer(options.url, timeoutMs);
    if (options.actionFromText === undefined) {
      const field = options.actionField ?? OPENENV_DEFAULTS.actionField;
      const fields = actionFields(info);
      if (fields.length > 0 && !fields.includes(field)) {
        throw new OpenEnvSchemaError(`${info.metadata.name}'s actions have no field '${field}' (fields: ${fields.join(', ')}): set actionField, or pass actionFromText.`);
      }
      const missing = missingRequiredFields(info, [field]);
      if (missing.length > 0) {
        throw new OpenEnvSchemaError(`${info.metadata.name}'s actions also require ${missing.join(', ')}: pass an actionFromText that fills them.`);
      }
    }
    const openSocket = options.openSocket ?? openWebSocket;
    const session = await OpenEnvEnvironment.open(openSocket, wsUrl, timeoutMs);
    return new OpenEnvEnvironment(options, info, session, openSocket, wsUrl, timeoutMs);
  }

  private static async open(openSocket: OpenSocket, wsUrl: string, timeoutMs: number): Promise<OpenEnvSession> {
    return new OpenEnvSession(await openSocket(wsUrl, { timeoutMs }), wsUrl, timeoutMs);
  }

  private constructor(
    private readonly options: OpenEnvOptions,
    /** What /metadata and /schema said at connect time. */
    readonly serverInfo: OpenEnvServerInfo,
    private session: OpenEnvSession,
    private readonly openSocket: OpenSocket,
    private readonly wsUrl: string,
    private readonly timeoutMs: number,
  ) {
    this.id = { name: options.name ?? serverInfo.metadata.name, version: options.version ?? serverInfo.metadata.version ?? OPENENV_DEFAULTS.version };
    this.maxTurns = options.maxTurns ?? OPENENV_DEFAULTS.maxTurns;
    this.actionVocabulary = options.actionVocabulary ?? [];
    this.lifecycle = new EpisodeLifecycle(this.id.name);
    const field = options.actionField ?? OPENENV_DEFAULTS.actionField;
    this.mapAction = options.actionFromText ? userMapping(options.actionFromText) : answerIntoField(field);
    this.toText = options.observationToText ?? observationText(options.observationFields ?? DEFAULT_OBSERVATION_FIELDS);
    this.toStateKey = options.stateKey ?? canonicalJson;
    this.classifyDone = options.classifyDone ?? defaultClassifyDone(options.serverStepLimit);
    this.successOf = options.successOf ?? defaultSuccessOf;
    this.prompt = options.systemPrompt ?? defaultSystemPrompt(serverInfo, this.actionVocabulary, options.actionFromText ? null : field);
  }

  async reset(seed: number): Promise<ResetResult> {
    return this.exclusive('reset', async () => {
      this.lifecycle.start(seed);
      this.current = null;
      this.serverSteps = 0;
      if (!this.session.isOpen) this.session = await OpenEnvEnvironment.open(this.openSocket, this.wsUrl, this.timeoutMs);
      const data = this.observationOf('reset', await this.session.request({ type: 'reset', data: { ...this.options.resetData?.(seed), seed } }));
      this.current = this.remember(data.observation);
      return { observation: this.current.text, stateKey: this.current.stateKey, info: metadataInfo(data) };
    });
  }

  async step(actionText: string): Promise<StepResult> {
    return this.exclusive('step', async () => {
      this.lifecycle.beginTurn();
      const before = this.current;
      if (before === null) throw new ResetNeededError(this.id.name); // the last reset failed
      const mapped = this.mapAction(actionText);
      if (!mapped.ok) return this.invalidTurn(before, mapped.problem);
      const reply = await this.session.request({ type: 'step', data: mapped.action });
      if (reply.type === 'error' && reply.data.code === 'VALIDATION_ERROR') {
        return this.invalidTurn(before, `the server refused the action ${canonicalJson(mapped.action)}: ${describeError(reply.data)}`);
      }
      const data = this.observationOf('step', reply);
      this.serverSteps += 1;
      this.current = this.remember(data.observation);
      const reward = data.reward ?? 0;
      const kind = data.done ? this.classifyDone({ observation: data.observation, metadata: data.metadata, reward: data.reward, serverSteps: this.serverSteps }) : null;
      const terminated = kind === 'terminated';
      const truncated = kind === 'truncated' || (kind === null && this.lifecycle.turns >= this.maxTurns);
      const info: Record<string, string> = { ...metadataInfo(data), action: canonicalJson(mapped.action) };
      if (data.done) info.doneReason = kind === 'truncated' ? 'server-truncated' : 'server-done';
      else if (truncated) info.doneReason = 'maxTurns';
      return this.endTurn(
        { observation: this.current.text, reward, terminated, truncated, actionValid: true, info, metrics: { actionsExecuted: 1 }, stateKey: this.current.stateKey },
        data.observation,
      );
    });
  }

  /** The server's state of this connection's environment (episode_id, step_count, and the env's own fields). */
  async state(): Promise<StateData> {
    return this.exclusive('state', async () => {
      const reply = await this.session.request({ type: 'state' });
      if (reply.type === 'error') throw new OpenEnvServerError('state', reply.data.code, reply.data.message, reply.data);
      if (reply.type !== 'state') throw new OpenEnvProtocolError(`the server answered state with a ${reply.type} message`);
      return reply.data;
    });
  }

  render(): string {
    return this.current?.text ?? '';
  }

  systemPrompt(): string {
    return this.prompt;
  }

  validActions(): readonly string[] {
    if (this.options.validActions && this.current) return this.options.validActions(this.current.observation);
    return this.actionVocabulary;
  }

  /** Sends {"type":"close"} and waits for the server to close the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.close();
  }

  private async exclusive<T>(call: 'reset' | 'step' | 'state', work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new OpenEnvClosedError(this.id.name);
    if (this.running !== null) throw new OpenEnvConcurrentCallError(this.id.name, call, this.running);
    this.running = call;
    try {
      return await work();
    } finally {
      this.running = null;
    }
  }

  private observationOf(request: string, reply: ServerMessage): ObservationData {
    if (reply.type === 'error') throw new OpenEnvServerError(request, reply.data.code, reply.data.message, reply.data);
    if (reply.type !== 'observation') throw new OpenEnvProtocolError(`the server answered ${request} with a ${reply.type} message`);
    return reply.data;
  }

  private remember(observation: JsonObject): Current {
    return { observation, text: this.toText(observation), stateKey: this.toStateKey(observation) };
  }

  private invalidTurn(before: Current, problem: string): StepResult {
    const truncated = this.lifecycle.turns >= this.maxTurns;
    const info: Record<string, string> = { problem };
    if (truncated) info.doneReason = 'maxTurns';
    return this.endTurn(
      { observation: before.text, reward: 0, terminated: false, truncated, actionValid: false, info, metrics: { actionsExecuted: 0 }, stateKey: before.stateKey },
      before.observation,
    );
  }

  private endTurn(result: StepResult, observation: JsonObject): StepResult {
    this.lifecycle.endTurn(result.terminated, result.truncated);
    if (result.terminated || result.truncated) {
      const success = this.successOf({ observation, reward: result.reward, terminated: result.terminated, truncated: result.truncated });
      result.metrics.success = success ? 1 : 0;
    }
    return result;
  }
}

function metadataInfo(data: ObservationData): Record<string, string> {
  return data.metadata === undefined || Object.keys(data.metadata).length === 0 ? {} : { metadata: canonicalJson(data.metadata) };
}

/** The server's message, with pydantic's error list when it sent one. */
function describeError(data: JsonObject & { message: string; code: string }): string {
  const errors = Array.isArray(data.errors) ? ` ${canonicalJson(data.errors).slice(0, 500)}` : '';
  return `${data.code}: ${data.message}${errors}`;
}

function defaultSystemPrompt(info: OpenEnvServerInfo, vocabulary: readonly string[], field: string | null): string {
  const lines = [info.metadata.description || `You interact with the ${info.metadata.name} environment.`];
  const properties = info.schema.action.properties as Record<string, { description?: unknown }> | undefined;
  const description = field === null ? undefined : properties?.[field]?.description;
  if (field !== null) lines.push(`Your answer is sent as the action's "${field}"${typeof description === 'string' ? ` (${description})` : ''}.`);
  if (vocabulary.length > 0) lines.push(`Valid actions: ${vocabulary.join(', ')}.`);
  lines.push('Each turn, think inside <think>…</think>, then give exactly one action inside <answer>…</answer>.');
  return lines.join('\n');
}
