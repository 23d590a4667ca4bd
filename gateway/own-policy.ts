// Upstream (a) wired to the backbone: the learner's transformer for the environment (version 0 built as a
// fresh learner builds it, later versions loaded from the checkpoints their policy-version events name),
// following <prefix>.policy.versions of the run as the actors do, so a new version takes over for the next
// call once it has loaded. Like the actors, it reads versions the learner publishes on <prefix>.policy.weights
// from that topic, so a gateway needs no disk shared with the learner.
import { topicName } from '../core/config.js';
import { followPolicyVersions } from '../rollout/follow-policy-versions.js';
import { createEnv } from '../envs/registry.js';
import { transformerProvider } from '../learner/policy/actors-provider.js';
import type { PolicyModelConfig } from '../learner/model/config.js';
import type { Backbone } from '../streams/index.js';
import { trajflowTokenizer } from '../tokenizer/index.js';
import { PolicyUpstream } from './policy-upstream.js';

/** Longest wait for the policy versions already on the topic. */
const CATCH_UP_MS = 30_000;

export interface OwnPolicyOptions {
  readonly runId: string;
  readonly envName: string;
  readonly model: string;
  readonly temperature: number;
  readonly modelSettings: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
}

export async function ownPolicyUpstream(
  backbone: Pick<Backbone, 'kafka' | 'codec' | 'config'>,
  options: OwnPolicyOptions,
): Promise<{ upstream: PolicyUpstream; close(): Promise<void> }> {
  const env = createEnv(options.envName);
  const weightsTopic = { kafka: backbone.kafka, topic: topicName(backbone.config, 'policy.weights'), runId: options.runId };
  const provider = await transformerProvider(options.envName, { temperature: options.temperature, model: options.modelSettings, weightsTopic });
  const follower = await followPolicyVersions(backbone.kafka, backbone.codec, {
    topic: topicName(backbone.config, 'policy.versions'),
    runId: options.runId,
    onVersion: (event) => provider.onVersion(event),
  });
  // Serve the version the learner is at, not version 0 first (bounded: an unreadable last record has no signal).
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([follower.caughtUp, new Promise((resolve) => (timer = setTimeout(resolve, CATCH_UP_MS)))]);
  clearTimeout(timer);
  const upstream = new PolicyUpstream({
    provider,
    tokenizer: trajflowTokenizer(),
    model: options.model,
    actionWords: env.actionVocabulary,
    maxActionsPerTurn: env.maxActionsPerTurn,
    temperature: options.temperature,
  });
  return {
    upstream,
    close: async () => {
      await follower.close();
      await provider.close?.();
    },
  };
}
