// Everything the sampler and the learner must agree on, built in one place: tokenizer, reply vocabulary
// (from the environment's action words), model shape and the restricted head. Checkpoints record the
// words and the model config, so a loaded policy is rebuilt with exactly the same pieces.
import { trajflowTokenizer, type WordTokenizer } from '../../tokenizer/index.js';
import { buildModelConfig, type PolicyModelConfig } from '../model/config.js';
import { ReplyHead, TransformerModel } from '../model/transformer.js';
import { replyVocabulary, type ReplyVocabulary } from './reply.js';
import { TransformerPolicy } from './transformer-policy.js';

export interface PolicyBundle {
  readonly tokenizer: WordTokenizer;
  readonly vocabulary: ReplyVocabulary;
  readonly model: TransformerModel;
  readonly head: ReplyHead;
}

export function createPolicyBundle(actionWords: readonly string[], model: Partial<Omit<PolicyModelConfig, 'vocabSize'>> = {}, values?: Map<string, Float32Array>): PolicyBundle {
  const tokenizer = trajflowTokenizer();
  const vocabulary = replyVocabulary(tokenizer, actionWords);
  const config = buildModelConfig({ ...model, vocabSize: tokenizer.vocabSize });
  const network = new TransformerModel(config, values);
  return { tokenizer, vocabulary, model: network, head: new ReplyHead(vocabulary.tokenIds, config.vocabSize) };
}

/** A Policy over the bundle's current weights (they change in place as the learner trains). */
export function policyOf(bundle: PolicyBundle, version: number, options: { temperature?: number; greedy?: boolean; maxBatch?: number } = {}): TransformerPolicy {
  return new TransformerPolicy({ ...bundle, version, ...options });
}

export function disposeBundle(bundle: PolicyBundle): void {
  bundle.model.dispose();
  bundle.head.dispose();
}
