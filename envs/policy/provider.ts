// Which policy new episodes use. The actors follow the policy-version topic and hand each event of their
// run to onVersion(); current() is read once at the start of every episode, so a new version takes over
// between episodes, never inside one (an episode's steps all carry one policyVersion).
import type { PolicyVersionEvent } from '../../schemas/index.js';
import { UniformRandomPolicy } from './random-policy.js';
import type { Policy } from './policy.js';

export interface PolicyProvider {
  /** The newest policy that is ready to sample with. */
  current(): Policy;
  /**
   * A policy-version event of this run arrived; older or repeated versions are ignored. May return a
   * promise that settles once the version is current (or failed to load): the actors' staleness gate
   * opens only after it, so a freed episode samples with the version that freed it.
   */
  onVersion(event: PolicyVersionEvent): void | Promise<void>;
  /** Releases what loading versions holds (e.g. a reader of the weights topic); the owner of the provider calls it once done. */
  close?(): Promise<void>;
}

export interface PolicyProviderOptions {
  /** The policy used before any version event (version 0 for a fresh run). */
  readonly initial: Policy;
  /** Builds the policy of a version (e.g. reads weightsUri and checks the checksum). */
  readonly load: (event: PolicyVersionEvent) => Policy | Promise<Policy>;
  /** Called when a version cannot be loaded; the previous policy stays current. */
  readonly onError?: (error: unknown, event: PolicyVersionEvent) => void;
  /** Releases what `load` holds. */
  readonly close?: () => Promise<void>;
}

/** Switches to each newer version once it has loaded; a load that finishes after a newer one is dropped. */
export function createPolicyProvider(options: PolicyProviderOptions): PolicyProvider {
  let policy = options.initial;
  let newestRequested = policy.version;
  const onError = options.onError ?? ((error, event) => console.error(`actors: could not load policy version ${event.version}:`, error));
  return {
    ...(options.close ? { close: options.close } : {}),
    current: () => policy,
    async onVersion(event) {
      if (event.version <= newestRequested) return;
      newestRequested = event.version;
      await Promise.resolve()
        .then(() => options.load(event))
        .then(
          (loaded) => {
            if (loaded.version > policy.version) policy = loaded;
          },
          (error: unknown) => onError(error, event),
        );
    },
  };
}

/** The random policy at every version: its "weights" never change, only the version it reports. */
export function createRandomPolicyProvider(initialVersion = 0): PolicyProvider {
  return createPolicyProvider({
    initial: new UniformRandomPolicy(initialVersion),
    load: (event) => new UniformRandomPolicy(event.version),
  });
}
