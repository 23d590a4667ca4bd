// The actors on the event backbone: steps go out through backbone.steps (keyed by group id), policy
// versions come in from <prefix>.policy.versions (each loaded by the provider, then kept in the history
// when the actors sample behind the newest, then told to the gate), progress lines go to stderr. This is what
// `trajflow actors`, the benchmark and the integration tests start.
import { topicName } from '../core/config.js';
import type { Backbone } from '../streams/index.js';
import { createRandomPolicyProvider, type PolicyProvider } from '../envs/policy/provider.js';
import { RolloutActors, type ActorsSummary, type ActorsDeps } from './actors.js';
import type { ActorsConfig } from './config.js';
import { samplesBehind } from './behaviour-version.js';
import { PolicyHistory } from './policy-history.js';
import { followPolicyVersions, type PolicyVersionFollower } from './follow-policy-versions.js';
import { startProgress } from './progress.js';
import { iterationsTrainedBy, StalenessGate } from './staleness-gate.js';

export interface StartActorsOptions {
  /** Default: the uniform-random policy, re-labelled with each new version. */
  readonly provider?: PolicyProvider;
  /** Where progress lines go (default stderr). */
  readonly write?: (line: string) => void;
  /** Longest wait for the versions already on the topic before starting anyway (default 30 s). */
  readonly catchUpTimeoutMs?: number;
  /** The environment of each rollout, when it is not the built-in named by the config (e.g. an OpenEnv server). */
  readonly createEnv?: ActorsDeps['createEnv'];
}

export interface ActorsRun {
  readonly actors: RolloutActors;
  readonly gate: StalenessGate;
  /** The run's end: every event acknowledged, the version stream closed. Rejects with the first failure. */
  readonly done: Promise<ActorsSummary>;
  /** Graceful stop (started iterations are completed); resolves like done. */
  stop(): Promise<ActorsSummary>;
}

export async function startActors(backbone: Backbone, config: ActorsConfig, options: StartActorsOptions = {}): Promise<ActorsRun> {
  const write = options.write ?? ((line: string) => console.error(line));
  const provider = options.provider ?? createRandomPolicyProvider();
  const gate = new StalenessGate(config.maxStaleness);
  const history = samplesBehind(config.maxStaleness) ? new PolicyHistory(provider.current()) : undefined;
  const follower = await followPolicyVersions(backbone.kafka, backbone.codec, {
    topic: topicName(backbone.config, 'policy.versions'),
    runId: config.runId,
    onVersion: async (event) => {
      await provider.onVersion(event);
      history?.record(provider.current(), iterationsTrainedBy(event));
      gate.observe(iterationsTrainedBy(event));
    },
  });
  try {
    await catchUp(follower, options.catchUpTimeoutMs ?? 30_000, () =>
      write(`actors: the policy versions already published were not all read in time; starting with learner v${gate.learnerVersion}`),
    );
    const actors = new RolloutActors(config, {
      provider,
      gate,
      ...(history ? { history } : {}),
      publish: (event) => backbone.steps.publish(event),
      ...(options.createEnv ? { createEnv: options.createEnv } : {}),
    });
    const stopProgress = startProgress(
      () => ({ stats: actors.stats, learnerVersion: gate.learnerVersion }),
      { startedAtMs: Date.now(), maxStaleness: config.maxStaleness },
      config.progressEveryMs,
      write,
    );
    const done = actors.run().finally(async () => {
      stopProgress();
      await backbone.steps.flush().catch(() => undefined);
      await follower.close();
    });
    done.catch(() => undefined); // the caller awaits done; an early failure is not "unhandled"
    return { actors, gate, done, stop: () => actors.stop().then(() => done) };
  } catch (error) {
    await follower.close();
    throw error;
  }
}

/** Waits for the follower to read what was on the topic, at most timeoutMs (then onTimeout). */
async function catchUp(follower: PolicyVersionFollower, timeoutMs: number, onTimeout: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([follower.caughtUp.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
  clearTimeout(timer);
  if (!inTime) onTimeout();
}
