// An agent on the OpenAI Agents SDK for JavaScript (`@openai/agents`), playing trajflow's FrozenLake through
// `trajflow gateway` with a function tool: `move` makes a move and returns the map after it. Only the OpenAI client
// the SDK's model provider uses is trajflow's — its base URL, and the episode's `x-trajflow-*` headers as its
// default headers; tracing is off because its exporter would post every run to OpenAI.
//
// A model that calls `move` makes its move through the tool, and the run stops there (`stop_on_first_tool`), so
// every model call is one move. trajflow's own policy never calls tools (it writes `<answer>…</answer>` text, and
// the gateway hands it the tools unused), so its reply is the run's final output and the agent plays that text as
// the move; either way the next call's last input is the new map (docs/guides/agent-frameworks.md).
//
//   npx trajflow gateway --env FrozenLake --run-id agents-sdk &
//   npx node --import tsx examples/agents/openai-agents-sdk.ts [baseURL] [episodes]
import { Agent, OpenAIProvider, Runner, tool, user, type AgentInputItem } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { apiKeyOf, commandLineOptions, type Episode, type EpisodesOptions, type EpisodesSummary, isMain, modelOf, playEpisodes, systemPromptOf } from './episodes.js';

const move = tool({
  name: 'move',
  description: 'Make your move on the map, e.g. "Left || Down"; returns the map after it.',
  parameters: z.object({ actions: z.string().describe('the actions, separated by ||') }),
  execute: async ({ actions }, context) => {
    if (!context) throw new Error('the move tool needs the episode as the run context');
    return (context.context as Episode).move(`<answer>${actions}</answer>`);
  },
});

/** One Agents SDK run per move until the episode ends; the history carries over from run to run. */
async function playEpisode(agent: Agent<Episode>, options: EpisodesOptions, episode: Episode): Promise<void> {
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: apiKeyOf(options), defaultHeaders: episode.headers });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client }), tracingDisabled: true });
  let history: AgentInputItem[] = [user(episode.observation)];
  while (!episode.done) {
    const moves = episode.moves;
    const result = await runner.run(agent, history, { context: episode });
    history = result.history;
    if (episode.moves === moves) {
      // The model answered in text: that text is its move.
      episode.move(String(result.finalOutput ?? ''));
      if (!episode.done) history.push(user(episode.observation));
    }
  }
}

/** Plays groups × groupSize episodes (one map per group) through the gateway; returns what they did. */
export function runAgentsSdkAgent(options: EpisodesOptions): Promise<EpisodesSummary> {
  const agent = new Agent<Episode>({
    name: 'FrozenLake player',
    instructions: systemPromptOf(options),
    model: modelOf(options),
    tools: [move],
    toolUseBehavior: 'stop_on_first_tool',
  });
  return playEpisodes(options, (episode) => playEpisode(agent, options, episode));
}

if (isMain(import.meta.url)) {
  const { successRate } = await runAgentsSdkAgent(commandLineOptions('agents-sdk'));
  console.log(`agents-sdk agent: success ${(100 * successRate).toFixed(1)}%`);
}
