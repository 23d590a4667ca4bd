// The actors' side of policy versions: each PolicyVersionEvent names a checkpoint (a file:// directory, or
// a version on the weights topic: learner/checkpoint/weights-transport.ts) and the SHA-256 of its weights;
// the provider reads it, checks the checksum, and builds a TransformerPolicy of that version. An episode keeps the policy it started with, so a few superseded models stay alive;
// models older than `keepVersions` behind the newest are freed (an episode lasting that many versions
// is already stale beyond any sensible bound). Actors that sample K versions behind the newest
// (max staleness K) need at least K kept: keepVersionsFor gives the number.
import { createPolicyProvider, type PolicyProvider } from '../../envs/policy/provider.js';
import type { PolicyVersionEvent } from '../../schemas/index.js';
import { readCheckpoint, CheckpointError, CheckpointMissingError, type Checkpoint } from '../checkpoint/checkpoint.js';
import { versionCheckpoints, type WeightsTopicSource } from '../checkpoint/weights-transport.js';
import { TOKENIZER_NAME } from '../../tokenizer/index.js';
import { createPolicyBundle, disposeBundle, policyOf, type PolicyBundle } from './bundle.js';
import type { TransformerPolicy } from './transformer-policy.js';

/** Superseded versions kept alive by default (an episode lasting longer is stale beyond any sensible bound). */
const DEFAULT_KEEP_VERSIONS = 4;

export interface CheckpointPolicyOptions {
  /** The policy before any version event arrives (e.g. loaded from the learner's latest checkpoint, or a fresh model). */
  readonly initial: TransformerPolicy;
  readonly temperature?: number;
  readonly keepVersions?: number;
  readonly onError?: (error: unknown, event: PolicyVersionEvent) => void;
  /** Where to read versions published on the weights topic (kafka: weightsUris); without it only file:// ones load. */
  readonly weightsTopic?: WeightsTopicSource;
}

/** The policy bundle a checkpoint describes: its model shape, reply words and weights (same tokenizer required). */
export function bundleFromCheckpoint(checkpoint: Checkpoint): PolicyBundle {
  const { manifest } = checkpoint;
  if (manifest.tokenizer !== TOKENIZER_NAME)
    throw new CheckpointError(`${checkpoint.directory} was trained with tokenizer ${manifest.tokenizer}; this build has ${TOKENIZER_NAME}`);
  const { vocabSize: _, ...shape } = manifest.model;
  return createPolicyBundle(manifest.replyWords, shape, checkpoint.weights);
}

export async function loadPolicyFromCheckpoint(
  directory: string,
  version: number,
  options: { checksum?: string; temperature?: number } = {},
): Promise<{ policy: TransformerPolicy; bundle: PolicyBundle }> {
  const bundle = bundleFromCheckpoint(await readCheckpoint(directory, options.checksum));
  return { policy: policyOf(bundle, version, options.temperature === undefined ? {} : { temperature: options.temperature }), bundle };
}

/** Versions behind the newest to keep alive for actors with `maxStaleness` (null: no bound): 4, or K + 1 when that is more. */
export function keepVersionsFor(maxStaleness: number | null): number {
  return Math.max(DEFAULT_KEEP_VERSIONS, (maxStaleness ?? 0) + 1);
}

export function createCheckpointPolicyProvider(options: CheckpointPolicyOptions): PolicyProvider {
  const keep = options.keepVersions ?? DEFAULT_KEEP_VERSIONS;
  const live = new Map<number, PolicyBundle>();
  const checkpoints = versionCheckpoints(options.weightsTopic);
  return createPolicyProvider({
    initial: options.initial,
    onError: options.onError ?? reportLoadError,
    close: () => checkpoints.close(),
    load: async (event) => {
      const bundle = bundleFromCheckpoint(await checkpoints.read(event));
      const policy = policyOf(bundle, event.version, options.temperature === undefined ? {} : { temperature: options.temperature });
      live.set(event.version, bundle);
      for (const [version, old] of live) {
        if (version < event.version - keep) {
          disposeBundle(old);
          live.delete(version);
        }
      }
      return policy;
    },
  });
}

/**
 * A rerun's actors read the version topic from its start, and the learner keeps only its last checkpoints: a
 * version whose directory is gone is said in one line (a newer version follows); any other failure in full.
 */
function reportLoadError(error: unknown, event: PolicyVersionEvent): void {
  if (error instanceof CheckpointMissingError) {
    console.error(`actors: policy version ${event.version} skipped: its checkpoint was pruned (the learner keeps its last ones); a newer version follows`);
  } else console.error(`actors: could not load policy version ${event.version}:`, error);
}
