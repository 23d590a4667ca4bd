// The seam between the gateway and whatever samples the reply: trajflow's own policy (policy-upstream.ts) or
// an OpenAI-compatible server by URL (openai-upstream.ts). Whatever it is, an answer carries the exact token
// ids and behaviour log-probs of every generated token — what the step event records and the learner's
// importance ratio divides by — or the upstream throws; the gateway never guesses them from text.

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  readonly role: ChatRole;
  /** Text content (content parts of type text joined); '' for an assistant message holding only tool calls. */
  readonly content: string;
  readonly name?: string;
  /** An assistant message's tool calls, passed through as the client sent them. */
  readonly toolCalls?: readonly unknown[];
  /** A tool message's answer to this call id. */
  readonly toolCallId?: string;
}

export type UpstreamPrompt = { readonly kind: 'chat'; readonly messages: readonly ChatMessage[] } | { readonly kind: 'text'; readonly prompt: string };

export interface SamplingParams {
  readonly n: number;
  /** null: the upstream's default. */
  readonly temperature: number | null;
  /** Most tokens to generate (max_tokens or max_completion_tokens); null: the upstream's default. */
  readonly maxTokens: number | null;
  readonly stop: readonly string[];
  /** The client asked for log-probs in its answer (the gateway asks the upstream for them either way). */
  readonly logprobs: boolean;
  readonly topLogprobs: number;
  readonly seed: number | null;
}

export interface UpstreamRequest {
  readonly model: string;
  readonly prompt: UpstreamPrompt;
  readonly sampling: SamplingParams;
  /** Request fields the gateway does not interpret (tools, tool_choice, top_p, response_format …), for an upstream that takes them. */
  readonly passthrough: Readonly<Record<string, unknown>>;
}

export interface TopLogProb {
  readonly token: string;
  readonly logprob: number;
}

export interface SampledChoice {
  readonly text: string;
  readonly tokenIds: readonly number[];
  readonly logProbs: readonly number[];
  /** Each token as text (for the answer's logprobs.content), aligned with tokenIds. */
  readonly tokens: readonly string[];
  /** Alternatives per token, when the client asked for top_logprobs and the upstream gave them. */
  readonly topLogProbs: readonly (readonly TopLogProb[])[];
  readonly finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** The assistant's tool calls (chat), as the upstream gave them. */
  readonly toolCalls: readonly unknown[] | null;
  /** The stop sequence that ended the reply, when the upstream says which (vLLM's `stop_reason`). */
  readonly stopSequence?: string;
}

export interface UpstreamAnswer {
  /** The model name to answer with. */
  readonly model: string;
  /** The policy version that sampled (0 for an external model unless configured). */
  readonly policyVersion: number;
  /** The prompt as recorded in the step's observation. */
  readonly promptText: string;
  /** Token ids of the prompt, when known; see promptScope. */
  readonly promptTokenIds: readonly number[] | null;
  /**
   * 'turn': promptTokenIds are what this turn added to the context (trajflow's policy: [OBS] observation [ACT]);
   * 'conversation': they are the whole prompt (an OpenAI-compatible server renders every message each call),
   * and the gateway records only what is new since the episode's previous turn.
   */
  readonly promptScope: 'turn' | 'conversation';
  readonly choices: readonly SampledChoice[];
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number };
  /** Facts for the step's info (seed, upstream response id …). */
  readonly info: Readonly<Record<string, string>>;
}

export interface Upstream {
  /** For logs and the step's info, e.g. `policy` or `openai:http://127.0.0.1:8000/v1`. */
  readonly name: string;
  /** Model names GET /v1/models lists and a request may name. */
  models(): readonly string[];
  complete(request: UpstreamRequest): Promise<UpstreamAnswer>;
}
