// One call, answered ⇒ recorded: ask the upstream, build the turn's step event for every choice, publish them
// and wait for Kafka's acknowledgement, and only then hand the answer back to be sent. A publish that fails
// or times out makes the call an error (503) and gives its turn index back; the answer is never sent.
// Finishing and timing out episodes publish their outcome step the same way. No express here: the app
// (app.ts) passes requests in, tests pass fakes (an upstream, a publisher that fails).
import { randomUUID } from 'node:crypto';
import { InvalidEventError, type StepEvent } from '../schemas/index.js';
import type { StepPublisher } from '../streams/index.js';
import { withDeadline } from '../api/deadline.js';
import type { Endpoint, GatewayRequest } from './chat-request.js';
import { EpisodeBook, newPromptIds, type OpenEpisodeState } from './episodes.js';
import { callIdentity, type IdentityDefaults } from './identity.js';
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
}

export interface RecordedCall {
  readonly callId: string;
  readonly answer: UpstreamAnswer;
  readonly steps: readonly StepEvent[];
}

/** Each endpoint's id prefix, as its API names its answers (chatcmpl-…, cmpl-…, resp_…, msg_…). */
const ID_PREFIX: Readonly<Record<Endpoint, string>> = { chat: 'chatcmpl-', completion: 'cmpl-', responses: 'resp_', messages: 'msg_' };

const defaultCallId = (endpoint: Endpoint): string => `${ID_PREFIX[endpoint]}${randomUUID().replaceAll('-', '')}`;

export class CallRecorder {
  readonly stats: GatewayStats = { answeredCalls: 0, recordedSteps: 0, upstreamFailures: 0, publishFailures: 0, episodesFinished: 0, episodesTimedOut: 0 };
  readonly book: EpisodeBook;
  private readonly now: () => number;

  constructor(private readonly deps: RecorderDeps) {
    this.book = new EpisodeBook({ timeoutMs: deps.episodeTimeoutMs });
    this.now = deps.now ?? Date.now;
  }

  /**
   * Answers and records one call; throws an OpenAIError when it cannot do both. `answerable` throws when the
   * upstream's answer cannot be put in the endpoint's shape, before anything is recorded.
   */
  async call(request: GatewayRequest, header: (name: string) => string | undefined, answerable: (answer: UpstreamAnswer) => void = () => undefined): Promise<RecordedCall> {
    const { upstream } = this.deps;
    const model = request.upstream.model;
    if (!upstream.models().includes(model)) {
      throw new OpenAIError(
        404,
        `the model '${model.slice(0, 100)}' does not exist here; GET /v1/models lists ${upstream.models().join(', ')}`,
        'invalid_request_error',
        'model',
        'model_not_found',
      );
    }
    const callId = (this.deps.newCallId ?? defaultCallId)(request.endpoint);
    const identity = callIdentity(header, request.metadata, this.deps.defaults, callId);
    const identities = Array.from({ length: request.upstream.sampling.n }, (_, i) => ({ ...identity, episodeId: choiceEpisodeId(identity.episodeId, i) }));
    for (const each of identities) this.book.checkOpen(each);
    const startedAtMs = this.now();
    const t0 = performance.now();
    let answer: UpstreamAnswer;
    try {
      answer = await upstream.complete(request.upstream);
      answerable(answer);
    } catch (error) {
      this.stats.upstreamFailures++;
      throw error;
    }
    if (answer.choices.length !== identities.length)
      throw new OpenAIError(502, `the upstream answered ${answer.choices.length} choices for n = ${identities.length}; nothing was recorded`, 'upstream_error');
    const upstreamMs = performance.now() - t0;
    const reserved = identities.map((each) => ({ identity: each, ...this.book.reserve(each, this.now()) }));
    const steps = reserved.map(({ identity: each, stepIndex, context }, i) => {
      const prompt = answer.promptTokenIds;
      const fresh = prompt === null ? null : answer.promptScope === 'turn' ? { ids: [...prompt], drift: false } : newPromptIds(context, prompt);
      return turnStep({
        identity: each,
        episodeId: each.episodeId,
        stepIndex,
        answer,
        choice: answer.choices[i]!,
        observationTokenIds: fresh?.ids ?? null,
        promptDrift: fresh?.drift ?? false,
        callId,
        upstreamName: upstream.name,
        startedAtMs,
        upstreamMs,
      });
    });
    await this.publish(steps, () => reserved.forEach(({ identity: each, stepIndex }) => this.book.abandon(each, stepIndex)));
    reserved.forEach(({ identity: each }, i) => {
      const context = answer.promptScope === 'conversation' && answer.promptTokenIds ? [...answer.promptTokenIds, ...answer.choices[i]!.tokenIds] : null;
      this.book.commit(each, context, answer.policyVersion, this.now());
    });
    this.stats.answeredCalls++;
    this.stats.recordedSteps += steps.length;
    return { callId, answer, steps };
  }

  /** Ends an open episode with its outcome step; 404 when it was never open, 409 when it already ended. */
  async finish(runId: string, episodeId: string, outcome: EpisodeOutcome): Promise<StepEvent> {
    const state = this.book.finish(runId, episodeId);
    if (!state) {
      const ended = this.book.endedAs(runId, episodeId);
      if (ended)
        throw new OpenAIError(
          409,
          `episode ${episodeId} of run ${runId} has already ${ended === 'finished' ? 'been finished' : 'timed out (published as truncated)'}`,
          'conflict_error',
          null,
          'episode_ended',
        );
      throw new OpenAIError(
        404,
        `no open episode ${episodeId} in run ${runId}: it made no call through this gateway (check x-trajflow-run)`,
        'not_found_error',
        null,
        'episode_not_found',
      );
    }
    const step = await this.end(state, outcome);
    this.stats.episodesFinished++;
    return step;
  }

  /** Publishes every episode idle past the timeout as truncated; returns how many. */
  async expire(): Promise<number> {
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
    const step = outcomeStep(state.identity, state.nextStep, state.policyVersion, outcome, this.now());
    await this.publish([step], () => this.book.reopen(state));
    this.stats.recordedSteps++;
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
