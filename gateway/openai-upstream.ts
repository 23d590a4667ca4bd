// Upstream (b): any OpenAI-compatible server by URL (vLLM; SGLang and others that answer in vLLM's shape).
// A chat request goes to its /v1/chat/completions whichever endpoint it came to (chat, Responses, Messages: the
// one endpoint that returns token ids), a text prompt to /v1/completions.
// Every call goes to it non-streaming with `logprobs: true` (completions: `logprobs: max(1, k)`),
// `return_tokens_as_token_ids: true` and `return_token_ids: true`, and the answer is read by
// vllm-response.ts: a choice without token ids is refused with a 502 naming the field, and nothing is
// recorded. The chat template is the server's: the recorded observation is the text of the messages new
// since the last assistant message, and its ids are the part of `prompt_token_ids` the episode's context
// does not already hold (episodes.ts newPromptIds).
import { Agent, request as httpRequest } from 'undici';
import { OpenAIError } from './openai-error.js';
import { promptIdsOf, sampledChoiceOf, UpstreamShapeError } from './vllm-response.js';
import type { ChatMessage, Upstream, UpstreamAnswer, UpstreamRequest } from './upstream.js';

export interface OpenAIUpstreamOptions {
  /** The server's /v1 root, e.g. http://127.0.0.1:8000/v1. */
  readonly baseUrl: string;
  /** Model names to serve; the first is also the default. */
  readonly models: readonly string[];
  /** Sent as `Authorization: Bearer` to the upstream (TRAJFLOW_GATEWAY_UPSTREAM_KEY). */
  readonly apiKey?: string;
  readonly timeoutMs: number;
  /** The policy version recorded with its answers (the checkpoint the server runs; default 0). */
  readonly policyVersion?: number;
}

/** The messages of the new turn (after the last assistant message) as text: `<role>: content` lines. */
export function renderTurn(messages: readonly ChatMessage[]): string {
  let start = 0;
  messages.forEach((message, i) => {
    if (message.role === 'assistant') start = i + 1;
  });
  return messages
    .slice(start)
    .map((m) => `${m.role}: ${m.content}`)
    .join('\n');
}

function bodyFor(request: UpstreamRequest): Record<string, unknown> {
  const { sampling, prompt } = request;
  const common = {
    ...request.passthrough,
    model: request.model,
    n: sampling.n,
    ...(sampling.temperature === null ? {} : { temperature: sampling.temperature }),
    ...(sampling.maxTokens === null ? {} : { max_tokens: sampling.maxTokens }),
    ...(sampling.stop.length > 0 ? { stop: sampling.stop } : {}),
    ...(sampling.seed === null ? {} : { seed: sampling.seed }),
    stream: false,
    return_tokens_as_token_ids: true,
    return_token_ids: true,
  };
  if (prompt.kind === 'text') return { ...common, prompt: prompt.prompt, logprobs: Math.max(1, sampling.topLogprobs) };
  const messages = prompt.messages.map((m) => ({
    role: m.role,
    content: m.toolCalls && m.content === '' ? null : m.content,
    ...(m.name === undefined ? {} : { name: m.name }),
    ...(m.toolCalls ? { tool_calls: m.toolCalls } : {}),
    ...(m.toolCallId === undefined ? {} : { tool_call_id: m.toolCallId }),
  }));
  return { ...common, messages, logprobs: true, ...(sampling.topLogprobs > 0 ? { top_logprobs: sampling.topLogprobs } : {}) };
}

export class OpenAIUpstream implements Upstream {
  readonly name: string;
  // undici's request API on a keep-alive agent, not fetch: at 200 calls/s fetch's web streams, abort signals and
  // body cloning took more CPU than the rest of the gateway's call (docs/design/gateway-recording.md, "Speed").
  private readonly agent: Agent;

  constructor(private readonly options: OpenAIUpstreamOptions) {
    this.name = `openai:${options.baseUrl}`;
    this.agent = new Agent({ keepAliveTimeout: 30_000, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs });
  }

  /** Closes the kept-alive connections to the upstream. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  models(): readonly string[] {
    return this.options.models;
  }

  async complete(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const kind = request.prompt.kind;
    const url = `${this.options.baseUrl.replace(/\/$/, '')}/${kind === 'chat' ? 'chat/completions' : 'completions'}`;
    let status: number;
    let text: string;
    try {
      const response = await httpRequest(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify(bodyFor(request)),
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new OpenAIError(502, `the upstream at ${this.options.baseUrl} did not answer: ${(error as Error).message}`, 'upstream_error', null, 'upstream_unavailable');
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamShapeError('the body', `is not JSON (HTTP ${status})`);
    }
    if (status < 200 || status >= 300) {
      // The upstream's own 4xx (a bad argument it refused) is the client's to fix: pass it on as it came.
      const error = (body as { error?: { message?: unknown; param?: unknown; code?: unknown } }).error;
      const message = typeof error?.message === 'string' ? error.message : text.slice(0, 300);
      const passed = status >= 400 && status < 500 ? status : 502;
      throw new OpenAIError(
        passed,
        `upstream: ${message}`,
        passed === 502 ? 'upstream_error' : 'invalid_request_error',
        typeof error?.param === 'string' ? error.param : null,
        'upstream_refused',
      );
    }
    return this.answerOf(body as Record<string, unknown>, request);
  }

  private answerOf(body: Record<string, unknown>, request: UpstreamRequest): UpstreamAnswer {
    if (!Array.isArray(body.choices) || body.choices.length === 0) throw new UpstreamShapeError('choices', 'is missing or empty');
    const choices = body.choices.map((choice, i) => sampledChoiceOf(choice, i, request.prompt.kind));
    const promptIds = promptIdsOf(body);
    const usage = (body.usage ?? {}) as { prompt_tokens?: unknown };
    return {
      model: typeof body.model === 'string' ? body.model : request.model,
      policyVersion: this.options.policyVersion ?? 0,
      promptText: request.prompt.kind === 'chat' ? renderTurn(request.prompt.messages) : request.prompt.prompt,
      promptTokenIds: promptIds,
      promptScope: 'conversation',
      choices,
      usage: {
        promptTokens: typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : (promptIds?.length ?? 0),
        completionTokens: choices.reduce((s, c) => s + c.tokenIds.length, 0),
      },
      info: typeof body.id === 'string' ? { upstreamId: body.id.slice(0, 200) } : {},
    };
  }
}
