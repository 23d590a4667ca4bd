// One call, answered ⇒ recorded: ask the upstream, build the turn's step event for every choice, publish them
// and wait for Kafka's acknowledgement, and only then hand the answer back to be sent. A publish that fails
// or times out makes the call an error (503) and gives its turn index back; the answer is never sent.
// Finishing and timing out episodes publish their outcome step the same way. Before a turn index is handed
// out, the book has read every step the log acknowledged before the call arrived (EpisodeSync), so another
// instance's or an earlier life's turns count. A call whose client went away before its answer is not
// published when that is known in time, and is named an orphan on the episode's next step when it is known
// after (docs/design/gateway-recording.md). Each call's phases are timed for its answer's Server-Timing header
// (call-timing.ts). No express here: the app (app.ts) passes requests in, tests pass
// fakes (an upstream, a publisher that fails).
import { randomUUID } from 'node:crypto';
import { InvalidEventError, type StepEvent } from '../schemas/index.js';
import type { StepPublisher } from '../streams/index.js';
import { withDeadline } from '../api/deadline.js';
import type { Endpoint, GatewayRequest } from './chat-request.js';
import type { CallTiming } from './call-timing.js';
import { EpisodeBook, newPromptIds, type OpenEpisodeState, type Reservation } from './episodes.js';
import { callIdentity, type CallIdentity, type IdentityDefaults } from './identity.js';
import { requestHash } from './request-hash.js';
import { stepRewardsOf } from './step-rewards.js';
import { OpenAIError } from './openai-error.js';
import { choiceEpisodeId, outcomeStep, turnStep, type EpisodeOutcome } from './record.js';
import type { Upstream, UpstreamAnswer } from './upstream.js';

export interface GatewayStats {
  answeredCalls: number;
  recordedSteps: number;
  upstreamFailures: number;
  publishFailures: number;
  episodesFinished: number;
  episodesTimedOut: number;
  /** Calls whose client went away before the answer (their turn, if published, is an orphan). */
  clientsGone: number;
  /** Turns named orphans on a published step: their client never saw the answer; kept out of samples. */
  orphanTurns: number;
}

/** How a catch-up went: how long its watermarks took to come back. */
export interface CaughtUp {
  readonly watermarksMs: number;
}

/** Reads what the steps topic holds into the book: resolves once every step acknowledged before the call is in. */
export interface EpisodeSync {
  catchUp(): Promise<CaughtUp>;
}

/** The read barrier of one call: its error or null, when it was released (performance.now()) and its watermarks' time. */
interface Synced {
  readonly error: Error | null;
  readonly at: number;
  readonly watermarksMs: number;
}

/** How a call's client is watched: gone() is true once it closed the connection before its answer. */
export interface CallOptions {
  readonly answerable?: (answer: UpstreamAnswer) => void;
  readonly clientGone?: () => boolean;
}

export interface RecorderDeps {
  readonly upstream: Upstream;
  readonly steps: Pick<StepPublisher, 'publishAll'>;
  readonly defaults: IdentityDefaults;
  readonly publishTimeoutMs: number;
  readonly episodeTimeoutMs: number;
  /** Wall clock (event times). */
  readonly now?: () => number;
  readonly newCallId?: (endpoint: Endpoint) => string;
  /** The book, when the caller feeds it from the log too; a fresh one otherwise. */
  readonly book?: EpisodeBook;
  /** The log's read barrier; without it the book knows only this gateway's own turns. */
  readonly sync?: EpisodeSync;
}

export interface RecordedCall {
  readonly callId: string;
  readonly answer: UpstreamAnswer;
  readonly steps: readonly StepEvent[];
  /** What the call's time went to (the answer's Server-Timing header). */
  readonly timing: CallTiming;
}

/** A call's turns with their reserved indices, before they are published. */
type Reserved = ReadonlyArray<{ readonly identity: CallIdentity } & Reservation>;

/** Each endpoint's id prefix, as its API names its answers (chatcmpl-…, cmpl-…, resp_…, msg_…). */
const ID_PREFIX: Readonly<Record<Endpoint, string>> = { chat: 'chatcmpl-', completion: 'cmpl-', responses: 'resp_', messages: 'msg_' };

const defaultCallId = (endpoint: Endpoint): string => `${ID_PREFIX[endpoint]}${randomUUID().replaceAll('-', '')}`;

export class CallRecorder {
  readonly stats: GatewayStats = {
    answeredCalls: 0,
    recordedSteps: 0,
    upstreamFailures: 0,
    publishFailures: 0,
    episodesFinished: 0,
    episodesTimedOut: 0,
    clientsGone: 0,
    orphanTurns: 0,
  };
  readonly book: EpisodeBook;
  private readonly now: () => number;

  constructor(private readonly deps: RecorderDeps) {
    this.book = deps.book ?? new EpisodeBook({ timeoutMs: deps.episodeTimeoutMs });
    this.now = deps.now ?? Date.now;
  }

  /**
   * Answers and records one call; throws an OpenAIError when it cannot do both. `answerable` throws when the
   * upstream's answer cannot be put in the endpoint's shape, before anything is recorded; a client gone before
   * the step is published gets nothing recorded.
   */
  async call(request: GatewayRequest, header: (name: string) => string | undefined, options: CallOptions = {}): Promise<RecordedCall> {
    this.checkModel(request.upstream.model);
    const callId = (this.deps.newCallId ?? defaultCallId)(request.endpoint);
    const identity = callIdentity(header, request.metadata, this.deps.defaults, callId);
    const identities = Array.from({ length: request.upstream.sampling.n }, (_, i) => ({ ...identity, episodeId: choiceEpisodeId(identity.episodeId, i) }));
    const arrived = performance.now();
    // Started on arrival, beside the upstream: every step acknowledged before this call is read before its index.
    const synced = this.synced();
    for (const each of identities) this.book.checkOpen(each);
    const startedAtMs = this.now();
    const t0 = performance.now();
    const answer = await this.ask(request, options.answerable, identities.length);
    const answered = performance.now();
    const barrier = await synced;
    if (barrier.error) throw barrier.error;
    const released = performance.now();
    if (options.clientGone?.()) {
      this.stats.clientsGone++;
      throw new OpenAIError(499, 'the client closed the connection before the answer; nothing was recorded', 'invalid_request_error', null, 'client_closed');
    }
    const hash = requestHash(request);
    const reserved: Reserved = identities.map((each) => ({ identity: each, ...this.book.reserve(each, this.now(), hash) }));
    const steps = this.turnSteps(reserved, answer, { callId, startedAtMs, upstreamMs: answered - t0, requestHash: hash });
    await this.publish(steps, () => reserved.forEach(({ identity: each, stepIndex }) => this.book.abandon(each, stepIndex)));
    const acknowledged = performance.now();
    this.commitTurns(reserved, answer, callId, hash);
    this.stats.answeredCalls++;
    this.stats.recordedSteps += steps.length;
    const timing: CallTiming = {
      upstreamMs: answered - t0,
      barrierMs: barrier.at - arrived,
      watermarksMs: barrier.watermarksMs,
      barrierWaitMs: Math.max(0, released - answered),
      publishMs: acknowledged - released,
      recordMs: acknowledged - arrived,
    };
    return { callId, answer, steps, timing };
  }

  /** Each reserved turn's step, its prompt ids those the turn added to the episode's context. */
  private turnSteps(reserved: Reserved, answer: UpstreamAnswer, call: { callId: string; startedAtMs: number; upstreamMs: number; requestHash: string }): StepEvent[] {
    return reserved.map((turn, i) =>
      turnStep({
        ...turn,
        ...this.observed(answer, turn.context),
        ...call,
        episodeId: turn.identity.episodeId,
        answer,
        choice: answer.choices[i]!,
        upstreamName: this.deps.upstream.name,
      }),
    );
  }

  /** The published turns into the book: their contexts, answer ids and the orphans their steps named. */
  private commitTurns(reserved: Reserved, answer: UpstreamAnswer, callId: string, hash: string): void {
    reserved.forEach(({ identity: each, stepIndex, context: contextBefore, orphans }, i) => {
      const context = answer.promptScope === 'conversation' && answer.promptTokenIds ? [...answer.promptTokenIds, ...answer.choices[i]!.tokenIds] : null;
      this.book.commit(each, { stepIndex, requestHash: hash, callId, contextBefore, context, orphans }, answer.policyVersion, this.now());
      this.stats.orphanTurns += orphans.length;
    });
  }

  /** A recorded call whose client went away before its answer was sent: its turns are orphans. */
  orphaned(recorded: RecordedCall): void {
    this.stats.clientsGone++;
    for (const step of recorded.steps) this.book.markOrphan(step.runId, step.episodeId, step.stepIndex);
  }

  private checkModel(model: string): void {
    const { upstream } = this.deps;
    if (upstream.models().includes(model)) return;
    throw new OpenAIError(
      404,
      `the model '${model.slice(0, 100)}' does not exist here; GET /v1/models lists ${upstream.models().join(', ')}`,
      'invalid_request_error',
      'model',
      'model_not_found',
    );
  }

  /** The upstream's answer, answerable and with a choice per episode; failures counted. */
  private async ask(request: GatewayRequest, answerable: CallOptions['answerable'], choices: number): Promise<UpstreamAnswer> {
    let answer: UpstreamAnswer;
    try {
      answer = await this.deps.upstream.complete(request.upstream);
      answerable?.(answer);
    } catch (error) {
      this.stats.upstreamFailures++;
      throw error;
    }
    if (answer.choices.length !== choices)
      throw new OpenAIError(502, `the upstream answered ${answer.choices.length} choices for n = ${choices}; nothing was recorded`, 'upstream_error');
    return answer;
  }

  /** The prompt ids a turn adds to the context, and whether they drifted from it. */
  private observed(answer: UpstreamAnswer, context: readonly number[] | null): { observationTokenIds: readonly number[] | null; promptDrift: boolean } {
    const prompt = answer.promptTokenIds;
    if (prompt === null) return { observationTokenIds: null, promptDrift: false };
    if (answer.promptScope === 'turn') return { observationTokenIds: [...prompt], promptDrift: false };
    const fresh = newPromptIds(context, prompt);
    return { observationTokenIds: fresh.ids, promptDrift: fresh.drift };
  }

  /** The log's read barrier, settled as an error or null (never a rejection left waiting while the upstream answers). */
  private synced(): Promise<Synced> {
    if (!this.deps.sync) return Promise.resolve({ error: null, at: performance.now(), watermarksMs: 0 });
    return this.deps.sync.catchUp().then(
      (caught) => ({ error: null, at: performance.now(), watermarksMs: caught.watermarksMs }),
      (error: unknown) => ({
        error: new OpenAIError(
          503,
          `the call was not answered because the episode's turns could not be read from the log (${(error as Error).message}); retry`,
          'server_error',
          null,
          'recording_unavailable',
          { 'Retry-After': '1' },
        ),
        at: performance.now(),
        watermarksMs: 0,
      }),
    );
  }

  /**
   * Ends an open episode with an outcome step for each of its trajectories (its own, and each agent's), the
   * step rewards of the finish credited to each (step-rewards.ts); 404 when it was never open, 409 when it
   * already ended.
   */
  async finish(runId: string, episodeId: string, outcome: EpisodeOutcome): Promise<StepEvent[]> {
    const { error } = await this.synced();
    if (error) throw error;
    const open = this.book.trajectories(runId, episodeId);
    if (open.length === 0) throw this.notOpen(runId, episodeId);
    const rewards = stepRewardsOf(
      outcome,
      open.map((state) => ({ episodeId: state.identity.episodeId, turns: state.nextStep, calls: state.calls })),
    );
    const states = open.map((state) => this.book.finish(runId, state.identity.episodeId)!);
    const steps = states.map((state, i) => outcomeStep(state.identity, state.nextStep, state.policyVersion, outcome, this.now(), state.orphans, rewards[i]));
    await this.publish(steps, () => states.forEach((state) => this.book.reopen(state)));
    this.stats.recordedSteps += steps.length;
    this.stats.episodesFinished += steps.length;
    for (const state of states) this.stats.orphanTurns += state.orphans.length;
    return steps;
  }

  /** Why a finish found nothing open: 409 when the episode already ended, else 404. */
  private notOpen(runId: string, episodeId: string): OpenAIError {
    const ended = this.book.endedAs(runId, episodeId);
    if (ended)
      return new OpenAIError(
        409,
        `episode ${episodeId} of run ${runId} has already ${ended === 'finished' ? 'been finished' : 'timed out (published as truncated)'}`,
        'conflict_error',
        null,
        'episode_ended',
      );
    return new OpenAIError(
      404,
      `no open episode ${episodeId} in run ${runId}: no call of it is recorded in the steps topic's recent past (check x-trajflow-run)`,
      'not_found_error',
      null,
      'episode_not_found',
    );
  }

  /** Publishes every episode idle past the timeout as truncated; returns how many. */
  async expire(): Promise<number> {
    if ((await this.synced()).error) return 0;
    let ended = 0;
    for (const state of this.book.expire(this.now())) {
      await this.end(state, { reward: 0, turnRewards: [], success: null, terminated: false, truncated: true, reason: 'timeout' }).then(
        () => {
          ended++;
          this.stats.episodesTimedOut++;
        },
        () => undefined,
      );
    }
    return ended;
  }

  private async end(state: OpenEpisodeState, outcome: EpisodeOutcome): Promise<StepEvent> {
    const step = outcomeStep(state.identity, state.nextStep, state.policyVersion, outcome, this.now(), state.orphans);
    await this.publish([step], () => this.book.reopen(state));
    this.stats.recordedSteps++;
    this.stats.orphanTurns += state.orphans.length;
    return step;
  }

  private async publish(steps: readonly StepEvent[], undo: () => void): Promise<void> {
    try {
      await withDeadline(this.deps.steps.publishAll(steps), this.deps.publishTimeoutMs, 'publishing the step');
    } catch (error) {
      undo();
      this.stats.publishFailures++;
      if (error instanceof InvalidEventError) {
        throw new OpenAIError(502, `the call cannot be recorded: ${error.message}; nothing was recorded`, 'upstream_error', null, 'unrecordable_step');
      }
      throw new OpenAIError(
        503,
        `the call was not answered because its step could not be recorded (${(error as Error).message}); retry`,
        'server_error',
        null,
        'recording_unavailable',
        { 'Retry-After': '1' },
      );
    }
  }
}
