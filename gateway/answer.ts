// What the gateway's endpoints answer, decided from values alone: a recorded call as server-sent events or one
// JSON object in its endpoint's shape, and a finish's run and episode ids (checked) and reply. app.ts sends them.
import type { StepEvent } from '../schemas/index.js';
import { ID_DESCRIPTION, ID_PATTERN } from '../schemas/ids.js';
import type { GatewayRequest } from './chat-request.js';
import { messageEvents, messageObject } from './messages-answer.js';
import { invalidParam } from './openai-error.js';
import type { RecordedCall } from './recorder.js';
import { responseEvents, responseObject } from './responses-answer.js';
import { chatChunks, chatCompletion, textChunks, textCompletion, type AnswerMeta } from './responses.js';
import { dataEvents, type SseEvent } from './sse.js';
import { INFO } from './turn-facts.js';
import type { UpstreamAnswer } from './upstream.js';

export type Answer = { readonly stream: true; readonly events: readonly SseEvent[] } | { readonly stream: false; readonly body: object };

function streamed(request: GatewayRequest, answer: UpstreamAnswer, meta: AnswerMeta): SseEvent[] {
  switch (request.endpoint) {
    case 'chat':
      return dataEvents(chatChunks(answer, meta, request.includeUsage));
    case 'completion':
      return dataEvents(textChunks(answer, meta, request.includeUsage));
    case 'responses':
      return responseEvents(answer, meta, request.echo ?? {});
    case 'messages':
      return messageEvents(answer, meta.id);
  }
}

function whole(request: GatewayRequest, answer: UpstreamAnswer, meta: AnswerMeta): object {
  switch (request.endpoint) {
    case 'chat':
      return chatCompletion(answer, meta);
    case 'completion':
      return textCompletion(answer, meta);
    case 'responses':
      return responseObject(answer, meta, request.echo ?? {});
    case 'messages':
      return messageObject(answer, meta.id);
  }
}

/** A recorded call's answer: its id, its creation second (the first step's time) and the asked log-probs, in the endpoint's shape. */
export function answerOf(request: GatewayRequest, recorded: RecordedCall): Answer {
  const meta: AnswerMeta = {
    id: recorded.callId,
    createdS: Math.floor(recorded.steps[0]!.eventTimeMs / 1000),
    logprobs: request.upstream.sampling.logprobs,
    topLogprobs: request.upstream.sampling.topLogprobs,
  };
  if (request.stream) return { stream: true, events: streamed(request, recorded.answer, meta) };
  return { stream: false, body: whole(request, recorded.answer, meta) };
}

/** Throws (a 502) when the upstream's answer cannot be put in the endpoint's shape: checked before anything is recorded. */
export function checkAnswerable(request: GatewayRequest, answer: UpstreamAnswer): void {
  const meta: AnswerMeta = { id: 'check', createdS: 0, logprobs: false, topLogprobs: 0 };
  if (request.endpoint === 'responses' || request.endpoint === 'messages') whole(request, answer, meta);
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

/**
 * The reply to a finish: the episode's ids, each trajectory its outcome steps ended (the episode's own, or one per
 * agent) with its steps and reward, and over all of them the steps and the reward recorded and how they ended.
 */
export function finishedBody(runId: string, episodeId: string, ends: readonly StepEvent[]) {
  const trajectories = ends.map((step) => ({
    episode_id: step.episodeId,
    group_id: step.groupId,
    agent: step.info[INFO.agent] ?? null,
    steps: step.stepIndex + 1,
    reward: step.reward,
  }));
  return {
    object: 'episode.finished',
    run_id: runId,
    episode_id: episodeId,
    steps: trajectories.reduce((n, t) => n + t.steps, 0),
    reward: trajectories.reduce((sum, t) => sum + t.reward, 0),
    terminated: ends[0]!.terminated,
    truncated: ends[0]!.truncated,
    trajectories,
  };
}
