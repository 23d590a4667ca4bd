// What every framework example under examples/agents/ shares, so that each of them holds only its framework's
// own code: the episodes it plays (one of trajflow's environments, one task per group), the `x-trajflow-*`
// headers that name each call's run, group and episode, the environment's turn, and the reward posted at the end
// (POST /v1/episodes/{id}/finish). Nothing here talks to a model: the framework does (docs/guides/agent-frameworks.md).
import { pathToFileURL } from 'node:url';
import type { Environment } from '../../envs/contract.js';
import { createEnv } from '../../envs/registry.js';

export interface EpisodesOptions {
  /** The gateway's OpenAI base URL, e.g. http://127.0.0.1:18090/v1. */
  readonly baseURL: string;
  readonly runId: string;
  readonly groups: number;
  readonly groupSize: number;
  /** A built-in environment (default FrozenLake, not slippery) and its options. */
  readonly envName?: string;
  readonly envOptions?: Record<string, unknown>;
  /** The task seed of group 0; group g plays seed firstSeed + g (default 1000). */
  readonly firstSeed?: number;
  /** Bearer token when the gateway requires one (TRAJFLOW_GATEWAY_TOKENS). */
  readonly apiKey?: string;
  /** The model the calls name (default trajflow-policy, the gateway's own policy). */
  readonly model?: string;
}

/** The model name of the calls, and the key the framework's client sends (none is needed on loopback). */
export const modelOf = (options: EpisodesOptions): string => options.model ?? 'trajflow-policy';
export const apiKeyOf = (options: EpisodesOptions): string => options.apiKey ?? 'unused-on-loopback';

/** A fresh environment of the run, with the options its episodes play with. */
function environmentOf(options: EpisodesOptions, rollout: number): Environment {
  const envName = options.envName ?? 'FrozenLake';
  // A group's episodes draw different rewards where the environment draws them (Bandit's high arm).
  const defaults = envName === 'FrozenLake' ? { slippery: false } : envName === 'Bandit' ? { rewardSeedOffset: rollout } : {};
  return createEnv(envName, { ...defaults, ...options.envOptions });
}

/** The system prompt of the run's environment, for frameworks that fix it when the agent is made. */
export const systemPromptOf = (options: EpisodesOptions): string => environmentOf(options, 0).systemPrompt();

/** One episode as a framework sees it: the headers for its calls, the prompt, and the environment's turn. */
export class Episode {
  /** The x-trajflow-* headers every call of this episode carries. */
  readonly headers: Readonly<Record<string, string>>;
  readonly systemPrompt: string;
  /** What the agent acts on next: the task, then the environment's answer to each move. */
  observation: string;
  done = false;
  reward = 0;
  success = false;
  terminated = false;
  /** The moves made (one per model call when the model answers in text). */
  moves = 0;

  constructor(
    readonly id: string,
    readonly groupId: string,
    private readonly env: Environment,
    seed: number,
    options: EpisodesOptions,
  ) {
    this.headers = {
      'x-trajflow-run': options.runId,
      'x-trajflow-group': groupId,
      'x-trajflow-episode': id,
      'x-trajflow-group-size': String(options.groupSize),
    };
    this.systemPrompt = env.systemPrompt();
    this.observation = env.reset(seed).observation;
  }

  /** Plays one move (a reply in the environment's `<answer>…</answer>` format) and returns what the agent sees next. */
  move(reply: string): string {
    if (this.done) return 'The episode is over: make no more moves.';
    const result = this.env.step(reply);
    this.moves++;
    this.reward += result.reward;
    this.observation = result.observation;
    if (result.terminated || result.truncated) {
      this.done = true;
      this.terminated = result.terminated;
      this.success = result.metrics.success === 1;
    }
    return this.observation;
  }
}

/** What a run of episodes did: its success rate and each episode in the order played. */
export interface EpisodesSummary {
  readonly successRate: number;
  readonly episodes: readonly Episode[];
}

/** Posts the episode's outcome to the gateway, which publishes it as the episode's last step. */
export async function finishEpisode(options: Pick<EpisodesOptions, 'baseURL' | 'runId' | 'apiKey'>, episode: Episode): Promise<void> {
  const response = await fetch(`${options.baseURL}/episodes/${encodeURIComponent(episode.id)}/finish`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-trajflow-run': options.runId, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
    body: JSON.stringify({ reward: episode.reward, success: episode.success, terminated: episode.terminated, truncated: !episode.terminated }),
  });
  if (!response.ok) throw new Error(`finishing ${episode.id}: HTTP ${response.status} ${await response.text()}`);
}

/** Plays groups × groupSize episodes one after another, each to its end by `play`, and finishes each. */
export async function playEpisodes(options: EpisodesOptions, play: (episode: Episode) => Promise<void>): Promise<EpisodesSummary> {
  const episodes: Episode[] = [];
  for (let g = 0; g < options.groups; g++) {
    for (let e = 0; e < options.groupSize; e++) {
      // A group is one task: its id names the task's seed, so later runs on other seeds never reuse an episode id.
      const seed = (options.firstSeed ?? 1000) + g;
      const episode = new Episode(`${options.runId}-s${seed}-e${e}`, `${options.runId}-s${seed}`, environmentOf(options, e), seed, options);
      await play(episode);
      if (!episode.done) throw new Error(`${episode.id}: the agent stopped before the episode ended (${episode.moves} moves)`);
      await finishEpisode(options, episode);
      episodes.push(episode);
    }
  }
  return { successRate: episodes.filter((e) => e.success).length / episodes.length, episodes };
}

/** The options of an example run from its command line: `[baseURL] [episodes]`, four episodes a group. */
export function commandLineOptions(runId: string): EpisodesOptions {
  const episodes = Number(process.argv[3] ?? 8);
  return {
    baseURL: process.argv[2] ?? 'http://127.0.0.1:18090/v1',
    runId,
    groups: Math.max(1, Math.round(episodes / 4)),
    groupSize: 4,
    ...(process.env.TRAJFLOW_GATEWAY_TOKEN ? { apiKey: process.env.TRAJFLOW_GATEWAY_TOKEN } : {}),
  };
}

/** True when the module at `url` is the script node was started with. */
export function isMain(url: string): boolean {
  return process.argv[1] !== undefined && url === pathToFileURL(process.argv[1]).href;
}
