// The policy's reply vocabulary and the two-way mapping between a reply's tokens and its text.
//
// The small policy decodes under a constraint: each reply token is one of the environment's action words
// or EOS, so a reply is "a1 a2 … EOS" (at most maxActionsPerTurn words; EOS is not sampled once the
// limit is reached) and its text is RAGEN's "<answer>a1 || a2</answer>". Sampler and learner both
// restrict the output head to these ids (TransformerModel.logits with a ReplyHead), so the behaviour
// log-probs and the learner's log-probs are over the same distribution. A free-text LLM would drop the
// constraint; a from-scratch model on 2 cores could not discover the answer format by chance.
import { extractAnswer, formatReply, splitActions } from '../../envs/actions.js';
import { SpecialToken, type WordTokenizer } from '../../tokenizer/word-pieces.js';
import { ConfigError } from '../../core/errors.js';

export interface ReplyVocabulary {
  /** Action words, in the order of tokenIds[1..]. */
  readonly words: readonly string[];
  /** EOS first, then one id per word. */
  readonly tokenIds: readonly number[];
}

export function replyVocabulary(tokenizer: WordTokenizer, words: readonly string[]): ReplyVocabulary {
  if (words.length === 0) throw new ConfigError("the reply vocabulary needs at least one action word (the environment's actionVocabulary)");
  const tokenIds = [SpecialToken.EOS as number];
  for (const word of words) {
    const id = tokenizer.singleTokenId(word);
    if (id === undefined) {
      throw new ConfigError(
        `action word "${word}" is not one token of ${tokenizer.name}; the small policy can only generate single-token actions (add the word to tokenizer/vocabulary.ts as a new tokenizer version)`,
      );
    }
    if (tokenIds.includes(id)) throw new ConfigError(`action word "${word}" appears twice in the reply vocabulary`);
    tokenIds.push(id);
  }
  return { words: [...words], tokenIds };
}

/** Text of a sampled reply (ids from the reply vocabulary, EOS optional at the end). */
export function replyText(vocabulary: ReplyVocabulary, ids: readonly number[]): string {
  const words = ids.filter((id) => id !== SpecialToken.EOS).map((id) => vocabulary.words[vocabulary.tokenIds.indexOf(id) - 1]!);
  return formatReply(words);
}

/**
 * The token ids the policy sampled for a reply text it wrote earlier (history holds texts only): its
 * words, then EOS unless the reply used all maxActionsPerTurn words. Text the policy could not have
 * written (a hand-made history) maps through the same rule, skipping unknown words.
 */
export function replyIdsOf(vocabulary: ReplyVocabulary, text: string, maxActionsPerTurn: number): number[] {
  const extracted = extractAnswer(text);
  const parts = extracted.ok && extracted.value.answer !== '' ? splitActions(extracted.value.answer, maxActionsPerTurn).considered : [];
  const ids = parts.flatMap((word) => {
    const at = vocabulary.words.indexOf(word);
    return at < 0 ? [] : [vocabulary.tokenIds[at + 1]!];
  });
  return ids.length < maxActionsPerTurn ? [...ids, SpecialToken.EOS] : ids;
}
