// An LLM agent written against the official `openai` client, playing trajflow's FrozenLake through
// `trajflow gateway`: the only trajflow-specific parts are the base URL, the headers that name the run, group
// and episode, and the reward posted at the end (POST /v1/episodes/{id}/finish). The gateway records every
// call as a step with the exact token ids and log-probs of the reply (docs/guides/llm-agents.md).
//
//   npx trajflow gateway --env FrozenLake --run-id agent-example &
//   node --import tsx examples/agents/openai-agent.ts [baseURL] [episodes]
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { pathToFileURL } from 'node:url';
import { createEnv } from '../../envs/registry.js';

export interface AgentOptions {
  /** The gateway's OpenAI base URL, e.g. http://127.0.0.1:18090/v1. */
  readonly baseURL: string;
  readonly runId: string;
  readonly groups: number;
  readonly groupSize: number;
  /** Bearer token when the gateway requires one (TRAJFLOW_GATEWAY_TOKENS). */
  readonly apiKey?: string;
}

/** Plays groups × groupSize episodes (one map per group); returns the success rate. */
export async function runAgent(options: AgentOptions): Promise<number> {
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey ?? 'unused-on-loopback' });
  let successes = 0;
  for (let g = 0; g < options.groups; g++) {
    for (let e = 0; e < options.groupSize; e++) {
      const episodeId = `${options.runId}-g${g}-e${e}`;
      const headers = {
        'x-trajflow-run': options.runId,
        'x-trajflow-group': `${options.runId}-g${g}`,
        'x-trajflow-episode': episodeId,
        'x-trajflow-group-size': String(options.groupSize),
      };
      const env = createEnv('FrozenLake', { slippery: false });
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: env.systemPrompt() },
        { role: 'user', content: env.reset(1000 + g).observation },
      ];
      let reward = 0;
      let success = false;
      for (;;) {
        const completion = await client.chat.completions.create({ model: 'trajflow-policy', messages }, { headers });
        const reply = completion.choices[0]?.message.content ?? '';
        messages.push({ role: 'assistant', content: reply });
        const result = env.step(reply);
        reward += result.reward;
        if (result.terminated || result.truncated) {
          success = result.metrics.success === 1;
          await finish(options, episodeId, { reward, success, terminated: result.terminated, truncated: !result.terminated });
          break;
        }
        messages.push({ role: 'user', content: result.observation });
      }
      if (success) successes++;
    }
  }
  return successes / (options.groups * options.groupSize);
}

async function finish(options: AgentOptions, episodeId: string, outcome: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${options.baseURL}/episodes/${encodeURIComponent(episodeId)}/finish`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-trajflow-run': options.runId, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    body: JSON.stringify(outcome),
  });
  if (!response.ok) throw new Error(`finishing ${episodeId}: HTTP ${response.status} ${await response.text()}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const baseURL = process.argv[2] ?? 'http://127.0.0.1:18090/v1';
  const episodes = Number(process.argv[3] ?? 8);
  const rate = await runAgent({
    baseURL,
    runId: 'agent-example',
    groups: Math.max(1, Math.round(episodes / 4)),
    groupSize: 4,
    ...(process.env.TRAJFLOW_GATEWAY_TOKEN ? { apiKey: process.env.TRAJFLOW_GATEWAY_TOKEN } : {}),
  });
  console.log(`agent: success ${(100 * rate).toFixed(1)}%`);
}
