// An agent on the Vercel AI SDK (`ai` with `@ai-sdk/openai`), playing trajflow's FrozenLake (or another built-in
// environment) through `trajflow gateway`: the provider's default model, `openai(model)`, speaks OpenAI's Responses
// API. Only the provider's base URL is trajflow's, each call carries the episode's `x-trajflow-*` headers, and the
// calls say `store: false`: the gateway stores nothing, so the history must be sent as messages, not as references
// to stored items (docs/guides/agent-frameworks.md).
//
//   npx trajflow gateway --env FrozenLake --run-id vercel-ai-sdk &
//   npx node --import tsx examples/agents/vercel-ai-sdk.ts [baseURL] [episodes]
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, type ModelMessage } from 'ai';
import { apiKeyOf, commandLineOptions, type EpisodesOptions, type EpisodesSummary, isMain, modelOf, playEpisodes } from './episodes.js';

/** Plays groups × groupSize episodes (one task per group) through the gateway; returns what they did. */
export function runVercelAiAgent(options: EpisodesOptions): Promise<EpisodesSummary> {
  const openai = createOpenAI({ baseURL: options.baseURL, apiKey: apiKeyOf(options) });
  return playEpisodes(options, async (episode) => {
    const messages: ModelMessage[] = [{ role: 'user', content: episode.observation }];
    while (!episode.done) {
      const { text, response } = await generateText({
        model: openai(modelOf(options)),
        system: episode.systemPrompt,
        messages,
        headers: episode.headers,
        providerOptions: { openai: { store: false } },
      });
      messages.push(...response.messages);
      const next = episode.move(text);
      if (!episode.done) messages.push({ role: 'user', content: next });
    }
  });
}

if (isMain(import.meta.url)) {
  const { successRate } = await runVercelAiAgent(commandLineOptions('vercel-ai-sdk'));
  console.log(`vercel-ai-sdk agent: success ${(100 * successRate).toFixed(1)}%`);
}
