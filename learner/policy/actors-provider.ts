// The provider `trajflow actors --policy transformer` uses: version 0 is a fresh model built exactly as
// a fresh learner builds it (same default shape and seed, so the same weights); every later version is
// loaded from the checkpoint its policy-version event names (on disk, or on the weights topic given).
import type { PolicyModelConfig } from '../model/config.js';
import { selectBackend, type BackendChoice } from '../backend.js';
import { createEnv } from '../../envs/registry.js';
import type { PolicyProvider } from '../../envs/policy/provider.js';
import { createPolicyBundle, policyOf } from './bundle.js';
import type { WeightsTopicSource } from '../checkpoint/weights-transport.js';
import { createCheckpointPolicyProvider, keepVersionsFor } from './checkpoint-provider.js';

/**
 * `model`: the learner's model settings (its v0 is built from them and its seed); later versions come from
 * checkpoints. `weightsTopic`: where versions published on the weights topic are read (close() the provider after).
 * `maxStaleness`: the actors' bound, so that the versions they sample behind the newest stay loaded (default 0).
 */
export async function transformerProvider(
  envName: string,
  options: {
    temperature?: number;
    backend?: BackendChoice;
    model?: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
    weightsTopic?: WeightsTopicSource;
    maxStaleness?: number | null;
  } = {},
): Promise<PolicyProvider> {
  const backend = await selectBackend(options.backend ?? 'auto');
  console.error(`actors: transformer policy on ${backend.description}`);
  const initial = policyOf(
    createPolicyBundle(createEnv(envName).actionVocabulary, options.model ?? {}),
    0,
    options.temperature === undefined ? {} : { temperature: options.temperature },
  );
  return createCheckpointPolicyProvider({
    initial,
    keepVersions: keepVersionsFor(options.maxStaleness ?? null),
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.weightsTopic === undefined ? {} : { weightsTopic: options.weightsTopic }),
  });
}
