// The rollout actors: P groups × G episodes in flight at once, in iteration order (ids.ts), each
// episode on its own environment, and no episode started before the staleness gate allows its iteration
// (staleness-gate.ts). An episode samples with the policy the provider holds when it starts (max staleness 0 or
// none), or, with max staleness K ≥ 1, with exactly the version trained on i − K batches, from the
// versions the history keeps (behaviour-version.ts).
//
// Scheduling: P × G workers take the next episode ordinal in turn; a worker whose next ordinal belongs
// to an iteration the gate does not allow yet waits for a newer learner version. stop() lets no NEW
// iteration start, but every iteration that has one episode started is completed (all its groups), so a
// graceful stop never leaves the processors a group with fewer than G episodes nor the learner a rollout
// batch with fewer than P groups, and a rerun from the next iteration continues the run exactly; done
// resolves once all their events are acknowledged by the broker.
import { ConfigError } from '../core/errors.js';
import type { Policy } from '../envs/policy/policy.js';
import type { PolicyProvider } from '../envs/policy/provider.js';
import { samplesBehind, samplingTarget } from './behaviour-version.js';
import type { ActorsConfig } from './config.js';
import { runEpisode, type EpisodeOutcome, type PublishStep } from './episode.js';
import { coordinatesOf, episodeIdOf, firstOrdinalOf, groupIdOf, groupSeedOf, type EpisodeCoordinates } from './ids.js';
import type { PolicyHistory } from './policy-history.js';
import { createRolloutEnv } from './rollout-env.js';
import type { StalenessGate } from './staleness-gate.js';
import type { Environment } from '../envs/contract.js';
import { isAsyncEnvironment, type AsyncEnvironment } from '../envs/openenv/async-environment.js';

export interface ActorsDeps {
  readonly provider: PolicyProvider;
  readonly publish: PublishStep;
  readonly gate: StalenessGate;
  /** The versions kept for lagged sampling; required with maxStaleness ≥ 1 (startActors feeds one from the version stream). */
  readonly history?: PolicyHistory;
  /** Event times (default Date.now). */
  readonly clock?: () => number;
  /** Called after each episode's events are acknowledged. */
  readonly onEpisode?: (coordinates: EpisodeCoordinates, outcome: EpisodeOutcome) => void;
  /**
   * Makes the environment of one rollout; default: the built-in named by the config. An environment
   * served elsewhere (e.g. OpenEnvEnvironment) is an AsyncEnvironment; it is closed after its episode.
   */
  readonly createEnv?: (rollout: number) => Environment | AsyncEnvironment | Promise<AsyncEnvironment>;
}

export interface ActorStats {
  episodes: number;
  steps: number;
  successes: number;
  totalReward: number;
  /** Version of the policy the last started episode used. */
  policyVersion: number;
  /** Highest iteration an episode was started in (-1 before the first). */
  iteration: number;
  /** Iteration the workers wait to start, when the staleness bound holds them (else null). */
  blockedIteration: number | null;
}

export interface ActorsSummary extends ActorStats {
  /** True when stop() ended the run before its last iteration. */
  readonly stopped: boolean;
}

export class RolloutActors {
  readonly stats: ActorStats = { episodes: 0, steps: 0, successes: 0, totalReward: 0, policyVersion: 0, iteration: -1, blockedIteration: null };
  private readonly abort = new AbortController();
  private readonly clock: () => number;
  private next: number;
  /** The highest ordinal started (-1: none yet). */
  private lastStarted = -1;
  /** Ordinals at or past this one are not started (the end of the run, or of the last started iteration after stop()). */
  private end: number;
  private failure: unknown = null;
  private running: Promise<ActorsSummary> | null = null;

  constructor(
    readonly config: ActorsConfig,
    private readonly deps: ActorsDeps,
  ) {
    const { groups, groupSize, firstIteration, iterations } = config;
    this.next = firstOrdinalOf(firstIteration, groups, groupSize);
    this.end = iterations === null ? Number.POSITIVE_INFINITY : firstOrdinalOf(firstIteration + iterations, groups, groupSize);
    this.clock = deps.clock ?? Date.now;
    if (samplesBehind(config.maxStaleness) && !deps.history)
      throw new ConfigError(
        `actors: maxStaleness=${config.maxStaleness} samples iteration i with version i − ${config.maxStaleness}, which needs the versions' history (deps.history; startActors makes one).`,
      );
    this.stats.policyVersion = deps.provider.current().version;
  }

  /** Starts the workers (once); resolves when the run is over, rejects with the first failure. */
  run(): Promise<ActorsSummary> {
    this.running ??= (async () => {
      const workers = this.config.groups * this.config.groupSize;
      await Promise.all(Array.from({ length: workers }, () => this.work()));
      if (this.failure !== null) throw this.failure;
      return { ...this.stats, blockedIteration: null, stopped: this.abort.signal.aborted };
    })();
    return this.running;
  }

  /** Starts no new iteration; started iterations are completed. Resolves like run(). */
  stop(): Promise<ActorsSummary> {
    if (!this.abort.signal.aborted) {
      const { groups, groupSize } = this.config;
      const started = this.lastStarted < 0 ? null : coordinatesOf(this.lastStarted, groups, groupSize).iteration;
      this.end = Math.min(this.end, started === null ? this.next : firstOrdinalOf(started + 1, groups, groupSize));
      this.abort.abort();
    }
    return this.run();
  }

  private async work(): Promise<void> {
    const { groups, groupSize } = this.config;
    while (this.next < this.end && this.failure === null) {
      const coordinates = coordinatesOf(this.next, groups, groupSize);
      if (!this.inShard(coordinates.groupIndex)) {
        // Another actor process's group: skip to the first episode of the next group.
        this.next = (coordinates.groupIndex + 1) * groupSize;
        continue;
      }
      if (!this.deps.gate.allows(coordinates.iteration)) {
        this.stats.blockedIteration = coordinates.iteration;
        await this.deps.gate.whenAllowed(coordinates.iteration, this.abort.signal);
        continue; // another worker may have taken the ordinal meanwhile; look again
      }
      this.stats.blockedIteration = null;
      this.lastStarted = this.next;
      this.next++;
      try {
        await this.runOne(coordinates);
      } catch (error) {
        this.failure ??= error;
        this.stop().catch(() => undefined);
      }
      // A policy and a publisher that resolve at once would otherwise chain episodes in microtasks,
      // which run before any timer, signal or socket: progress, stop() and Kafka would never get a turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** The policy of an episode of `iteration`; the versions no later episode can use are then let go. */
  private policyFor(iteration: number): Policy {
    const { history, provider } = this.deps;
    const target = samplingTarget(iteration, this.config.maxStaleness);
    if (target === null || !history) return provider.current();
    const policy = history.policyFor(target);
    history.forget(samplingTarget(this.nextIteration(), this.config.maxStaleness));
    return policy;
  }

  /** The iteration of the next episode to start: no later episode samples for a lower target. */
  private nextIteration(): number {
    return coordinatesOf(this.next, this.config.groups, this.config.groupSize).iteration;
  }

  private inShard(groupIndex: number): boolean {
    const { index, count } = this.config.shard;
    return groupIndex % count === index;
  }

  private async runOne(coordinates: EpisodeCoordinates): Promise<void> {
    const { runId, groupSize, seedBase } = this.config;
    // Chosen before anything is awaited: every episode started earlier has chosen before a later one lets versions go.
    const policy = this.policyFor(coordinates.iteration);
    const env = this.deps.createEnv ? await this.deps.createEnv(coordinates.rollout) : createRolloutEnv(this.config, coordinates.rollout);
    const groupId = groupIdOf(runId, coordinates.groupIndex);
    this.stats.policyVersion = policy.version;
    this.stats.iteration = Math.max(this.stats.iteration, coordinates.iteration);
    const outcome = await runEpisode({
      context: {
        runId,
        env: env.id,
        groupId,
        episodeId: episodeIdOf(groupId, coordinates.rollout),
        groupSize,
        groupSeed: groupSeedOf(seedBase, coordinates.groupIndex),
        rollout: coordinates.rollout,
        iteration: coordinates.iteration,
        batchGroups: this.config.groups,
      },
      env,
      policy,
      publish: this.deps.publish,
      clock: this.clock,
    });
    if (isAsyncEnvironment(env)) await env.close();
    this.stats.episodes++;
    this.stats.steps += outcome.steps;
    this.stats.successes += outcome.success ? 1 : 0;
    this.stats.totalReward += outcome.totalReward;
    this.deps.onEpisode?.(coordinates, outcome);
  }
}
