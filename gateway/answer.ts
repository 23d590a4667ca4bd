// What the gateway's endpoints answer, decided from values alone: a recorded call as SSE chunks or one JSON
// object in its endpoint's shape, and a finish's run and episode ids (checked) and reply. app.ts sends them.
import type { StepEvent } from '../schemas/index.js';
import { ID_DESCRIPTION, ID_PATTERN } from '../schemas/ids.js';
import type { GatewayRequest } from './chat-request.js';
import { invalidParam } from './openai-error.js';
import type { RecordedCall } from './recorder.js';
import { chatChunks, chatCompletion, textChunks, textCompletion, type AnswerMeta } from './responses.js';

export type Answer = { readonly stream: true; readonly payloads: readonly string[] } | { readonly stream: false; readonly body: object };

/** A recorded call's answer: its id, its creation second (the first step's time) and the asked log-probs, in the endpoint's shape. */
export function answerOf(request: GatewayRequest, recorded: RecordedCall): Answer {
  const meta: AnswerMeta = {
    id: recorded.callId,
    createdS: Math.floor(recorded.steps[0]!.eventTimeMs / 1000),
    logprobs: request.upstream.sampling.logprobs,
    topLogprobs: request.upstream.sampling.topLogprobs,
  };
  const chat = request.endpoint === 'chat';
  if (request.stream) return { stream: true, payloads: chat ? chatChunks(recorded.answer, meta, request.includeUsage) : textChunks(recorded.answer, meta, request.includeUsage) };
  return { stream: false, body: chat ? chatCompletion(recorded.answer, meta) : textCompletion(recorded.answer, meta) };
}

/** The episode id of a finish's path, which must be an id. */
export function finishEpisodeId(raw: string): string {
  if (!ID_PATTERN.test(raw)) throw invalidParam('id', `the episode id in the path must be ${ID_DESCRIPTION}`);
  return raw;
}

/** A finish's run: the x-trajflow-run header, else the body's `run`, else the gateway's; header and body must agree. */
export function finishRunId(header: string | undefined, bodyRun: string | undefined, defaultRun: string): string {
  if (header !== undefined && bodyRun !== undefined && header !== bodyRun) throw invalidParam('run', `disagrees with the x-trajflow-run header (${header.slice(0, 60)})`);
  const runId = header ?? bodyRun ?? defaultRun;
  if (!ID_PATTERN.test(runId)) throw invalidParam(header !== undefined ? 'x-trajflow-run' : 'run', `must be ${ID_DESCRIPTION}`);
  return runId;
}

/** The reply to a finish: the episode's ids and how its outcome step ended it. */
export function finishedBody(runId: string, episodeId: string, step: StepEvent) {
  return {
    object: 'episode.finished',
    run_id: runId,
    episode_id: episodeId,
    steps: step.stepIndex + 1,
    reward: step.reward,
    terminated: step.terminated,
    truncated: step.truncated,
  };
}
