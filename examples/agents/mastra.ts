// An agent on Mastra (`@mastra/core` Agent), playing trajflow's FrozenLake through `trajflow gateway`. Its model is
// Mastra's own OpenAI-compatible model config — an `openai/<model>` id with the gateway's base URL as its `url` —
// which calls chat completions (`api: 'responses'` would call the Responses API); each call carries the episode's
// `x-trajflow-*` headers as Mastra's per-call model headers (docs/guides/agent-frameworks.md).
//
//   npx trajflow gateway --env FrozenLake --run-id mastra &
//   npx node --import tsx examples/agents/mastra.ts [baseURL] [episodes]
import { Agent } from '@mastra/core/agent';
import { apiKeyOf, commandLineOptions, type EpisodesOptions, type EpisodesSummary, isMain, modelOf, playEpisodes, systemPromptOf } from './episodes.js';

type Message = { role: 'user'; content: string } | { role: 'assistant'; content: string };

/** Plays groups × groupSize episodes (one map per group) through the gateway; returns what they did. */
export function runMastraAgent(options: EpisodesOptions): Promise<EpisodesSummary> {
  const agent = new Agent({
    id: 'frozenlake-player',
    name: 'FrozenLake player',
    instructions: systemPromptOf(options),
    model: { id: `openai/${modelOf(options)}`, url: options.baseURL, apiKey: apiKeyOf(options) },
  });
  return playEpisodes(options, async (episode) => {
    const messages: Message[] = [{ role: 'user', content: episode.observation }];
    while (!episode.done) {
      const { text } = await agent.generate(messages, { modelSettings: { headers: { ...episode.headers } } });
      messages.push({ role: 'assistant', content: text });
      const next = episode.move(text);
      if (!episode.done) messages.push({ role: 'user', content: next });
    }
  });
}

if (isMain(import.meta.url)) {
  const { successRate } = await runMastraAgent(commandLineOptions('mastra'));
  console.log(`mastra agent: success ${(100 * successRate).toFixed(1)}%`);
}
