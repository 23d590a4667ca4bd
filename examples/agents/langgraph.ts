// An agent on LangGraph.js (`@langchain/langgraph`) with LangChain's OpenAI chat model (`@langchain/openai`
// ChatOpenAI, on chat completions), playing trajflow's FrozenLake through `trajflow gateway`: a graph of two nodes,
// the model's turn and the environment's, looping until the episode ends. Only the chat model's base URL is
// trajflow's, and each call carries the episode's `x-trajflow-*` headers (docs/guides/agent-frameworks.md).
//
//   npx trajflow gateway --env FrozenLake --run-id langgraph &
//   npx node --import tsx examples/agents/langgraph.ts [baseURL] [episodes]
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ChatOpenAI } from '@langchain/openai';
import { apiKeyOf, commandLineOptions, type Episode, type EpisodesOptions, type EpisodesSummary, isMain, modelOf, playEpisodes } from './episodes.js';

type State = typeof MessagesAnnotation.State;
const episodeOf = (config: RunnableConfig): Episode => config.configurable?.episode as Episode;

/** The graph: the model answers, the environment plays the answer and shows the new map, until the episode ends. */
function playerGraph(model: ChatOpenAI) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state: State, config: RunnableConfig) => ({
      messages: [await model.invoke(state.messages, { options: { headers: episodeOf(config).headers } })],
    }))
    .addNode('environment', (state: State, config: RunnableConfig) => ({
      messages: [new HumanMessage(episodeOf(config).move(String(state.messages.at(-1)?.content ?? '')))],
    }))
    .addEdge(START, 'agent')
    .addEdge('agent', 'environment')
    .addConditionalEdges('environment', (_state: State, config: RunnableConfig) => (episodeOf(config).done ? END : 'agent'))
    .compile();
}

/** Plays groups × groupSize episodes (one map per group) through the gateway; returns what they did. */
export function runLangGraphAgent(options: EpisodesOptions): Promise<EpisodesSummary> {
  const model = new ChatOpenAI({ model: modelOf(options), apiKey: apiKeyOf(options), configuration: { baseURL: options.baseURL } });
  const graph = playerGraph(model);
  return playEpisodes(options, async (episode) => {
    await graph.invoke({ messages: [new SystemMessage(episode.systemPrompt), new HumanMessage(episode.observation)] }, { configurable: { episode } });
  });
}

if (isMain(import.meta.url)) {
  const { successRate } = await runLangGraphAgent(commandLineOptions('langgraph'));
  console.log(`langgraph agent: success ${(100 * successRate).toFixed(1)}%`);
}
