// The token context the policy acts on, identical to what a training sample holds for the same turns:
// per turn [OBS, observation…, ACT] (the first turn starts with BOS), then the reply's ids. The actors
// send the prompt part of each turn as the step's observationTokenIds, so the processors' samples are
// exactly these sequences and the learner scores each reply token in the context it was sampled in.
// The system prompt is left out: the small policy is trained per environment and learns the task from
// rewards, so the fixed instructions would only cost positions.
import type { HistoryEntry } from '../../envs/policy/policy.js';
import { SpecialToken, type WordTokenizer } from '../../tokenizer/word-pieces.js';
import { replyIdsOf, type ReplyVocabulary } from './reply.js';

/** The ids that open a turn: [BOS?, OBS, observation…, ACT]. */
export function turnPromptIds(tokenizer: WordTokenizer, observation: string, firstTurn: boolean): number[] {
  const ids = firstTurn ? [SpecialToken.BOS as number] : [];
  ids.push(SpecialToken.OBS, ...tokenizer.tokenize(observation), SpecialToken.ACT);
  return ids;
}

/** Context ids of the whole episode so far, ending with the current turn's prompt. */
export function contextIds(
  tokenizer: WordTokenizer,
  vocabulary: ReplyVocabulary,
  history: readonly HistoryEntry[],
  observation: string,
  maxActionsPerTurn: number,
): { context: number[]; prompt: number[] } {
  const context: number[] = [];
  let turn = 0;
  for (const entry of history) {
    if (entry.role === 'observation') context.push(...turnPromptIds(tokenizer, entry.text, turn++ === 0));
    else context.push(...replyIdsOf(vocabulary, entry.text, maxActionsPerTurn));
  }
  const prompt = turnPromptIds(tokenizer, observation, turn === 0);
  context.push(...prompt);
  return { context, prompt };
}
