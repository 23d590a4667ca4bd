// Upstream (a): trajflow's own policy — the current policy version of the run, hot-swapped when the learner
// publishes a new one (the provider follows <prefix>.policy.versions, as the actors do; a call samples with
// the version that was current when it arrived).
//
// Rendering: the chat becomes the Policy interface's request (envs/policy/policy.ts). System and developer
// messages are the system prompt (the small policy leaves it out, docs/concepts/policy-model.md); user and
// tool messages are observations and assistant messages actions, oldest first; the last message must be a
// user or tool message: the observation to act on. The policy tokenizes it itself ([OBS] text [ACT], the
// tokenizer of tokenizer/), samples with its own sampler — exact token ids and the log-probs of the
// distribution it sampled from — and detokenizes the reply; the step records exactly that, as actors' steps do.
//
// What it cannot honour it refuses (400 naming the field) rather than record log-probs of a distribution it
// did not sample from: a temperature other than the learner's, stop sequences, top_p, top_k, penalties, logit_bias,
// response_format. Tools are accepted and never called (the policy writes only <answer>…</answer> replies).
// top_logprobs lists the sampled token only (the sampler keeps no other alternatives).
import type { HistoryEntry, PolicyProvider } from '../envs/policy/index.js';
import { SpecialToken, type WordTokenizer } from '../tokenizer/index.js';
import { invalidParam } from './openai-error.js';
import type { SampledChoice, Upstream, UpstreamAnswer, UpstreamRequest } from './upstream.js';

export interface PolicyUpstreamOptions {
  readonly provider: PolicyProvider;
  readonly tokenizer: WordTokenizer;
  /** The model name clients use (GET /v1/models lists it). */
  readonly model: string;
  /** The environment's action words (the random policy samples among them) and its limit per reply. */
  readonly actionWords: readonly string[];
  readonly maxActionsPerTurn: number;
  /** The temperature the policy samples at (the learner divides its logits by the same). */
  readonly temperature: number;
  /** Seeds a call without `seed` (default: a random 31-bit integer). */
  readonly randomSeed?: () => number;
}

const UNSUPPORTED = ['top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'response_format'] as const;

/** The chat or text prompt as the policy's request: system prompt, history and the observation to act on. */
export function renderForPolicy(request: UpstreamRequest): { systemPrompt: string; history: HistoryEntry[]; observation: string } {
  if (request.prompt.kind === 'text') return { systemPrompt: '', history: [], observation: request.prompt.prompt };
  const system: string[] = [];
  const turns: HistoryEntry[] = [];
  for (const message of request.prompt.messages) {
    if (message.role === 'system' || message.role === 'developer') system.push(message.content);
    else turns.push({ role: message.role === 'assistant' ? 'action' : 'observation', text: message.content });
  }
  const last = turns.pop();
  if (last?.role !== 'observation') throw invalidParam('messages', 'the last message must be a user or tool message: the observation the policy acts on');
  return { systemPrompt: system.join('\n'), history: turns, observation: last.text };
}

function checkSupported(request: UpstreamRequest, temperature: number): void {
  for (const key of UNSUPPORTED) {
    if (request.passthrough[key] !== undefined && request.passthrough[key] !== null) {
      throw invalidParam(key, "is not supported by trajflow's own policy: it would sample from a distribution other than the one recorded");
    }
  }
  const asked = request.sampling.temperature;
  if (asked !== null && Math.abs(asked - temperature) > 1e-9) {
    throw invalidParam(
      'temperature',
      `trajflow's own policy samples at the learner's temperature ${temperature} (the log-probs the learner divides by); omit it or send ${temperature}`,
    );
  }
  if (request.sampling.stop.length > 0)
    throw invalidParam('stop', "is not supported by trajflow's own policy: its replies end at <eos>, and cutting one would break its token record");
}

export class PolicyUpstream implements Upstream {
  readonly name = 'policy';

  constructor(private readonly options: PolicyUpstreamOptions) {}

  models(): readonly string[] {
    return [this.options.model];
  }

  async complete(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const { provider, tokenizer, maxActionsPerTurn } = this.options;
    checkSupported(request, this.options.temperature);
    const rendered = renderForPolicy(request);
    // Every choice of one call samples with one version.
    const policy = provider.current();
    const maxTokens = request.sampling.maxTokens;
    // A reply is at most maxWords words, then EOS unless the limit was reached.
    const maxWords = Math.max(1, Math.min(maxActionsPerTurn, maxTokens ?? Number.MAX_SAFE_INTEGER));
    const seed = request.sampling.seed ?? (this.options.randomSeed ?? (() => Math.floor(Math.random() * 2 ** 31)))();
    const replies = await Promise.all(
      Array.from({ length: request.sampling.n }, (_, i) =>
        policy.act({ ...rendered, seed: seed + i, actionSpace: { validActions: this.options.actionWords, maxActionsPerTurn: maxWords } }),
      ),
    );
    const prompt = replies[0]!.promptTokenIds ?? null;
    const choices: SampledChoice[] = replies.map((reply) => {
      const tokens = reply.tokenIds.map((id) => tokenizer.decode([id], true));
      const ended = reply.tokenIds[reply.tokenIds.length - 1] === SpecialToken.EOS;
      return {
        text: reply.text,
        tokenIds: reply.tokenIds,
        logProbs: reply.logProbs,
        tokens,
        topLogProbs: tokens.map((token, i) => [{ token, logprob: reply.logProbs[i]! }]),
        finishReason: ended || maxTokens === null || maxTokens > reply.tokenIds.length ? 'stop' : 'length',
        toolCalls: null,
      };
    });
    return {
      model: this.options.model,
      policyVersion: policy.version,
      promptText: rendered.observation,
      promptTokenIds: prompt,
      promptScope: 'turn',
      choices,
      usage: { promptTokens: prompt?.length ?? tokenizer.tokenize(rendered.observation).length, completionTokens: choices.reduce((s, c) => s + c.tokenIds.length, 0) },
      info: { seed: String(seed), temperature: String(this.options.temperature) },
    };
  }
}
