// Readable tokens for the trajectory inspector: the text of each of a sample's token ids, when the episode
// shows that trajflow's tokenizer made them. Token ids carry no tokenizer name, so this is checked on the
// episode itself: every step that sent observationTokenIds (a policy that tokenizes itself does) must decode
// back to its observation text. Ids from any other tokenizer (the processors' byte stand-in, an external
// model's) fail the check, and the inspector shows ids instead of text it would get wrong.
import { TOKENIZER_NAME, trajflowTokenizer } from '../tokenizer/index.js';
import type { EpisodeView } from '../storage/query/trajectories.js';

export interface TokenText {
  /** The tokenizer that decoded the ids. */
  readonly tokenizer: string;
  /** One string per id of sample.tokens.tokenIds: a word piece, a byte's character, or a special as <obs>. */
  readonly pieces: string[];
}

/** The episode's sample tokens as text, or null when there are none or they are not trajflow's. */
export function tokenText(episode: Pick<EpisodeView, 'steps' | 'sample'>): TokenText | null {
  const ids = episode.sample?.tokens?.tokenIds;
  if (ids === undefined || ids.length === 0) return null;
  const tokenizer = trajflowTokenizer();
  if (ids.some((id) => !Number.isInteger(id) || id < 0 || id >= tokenizer.vocabSize)) return null;
  const witnesses = episode.steps.filter((step) => step.observationTokenIds !== null && step.observationTokenIds.length > 0);
  if (witnesses.length === 0) return null;
  try {
    if (!witnesses.every((step) => tokenizer.decode(step.observationTokenIds!) === step.observation)) return null;
  } catch {
    return null; // an id outside the vocabulary
  }
  // A byte of a multi-byte character is not text alone: it shows as U+FFFD.
  return { tokenizer: TOKENIZER_NAME, pieces: ids.map((id) => tokenizer.decode([id], true)) };
}

/** The episode with `tokenText` added (null when the ids cannot be decoded faithfully). */
export function withTokenText<E extends Pick<EpisodeView, 'steps' | 'sample'>>(episode: E): E & { readonly tokenText: TokenText | null } {
  return { ...episode, tokenText: tokenText(episode) };
}
