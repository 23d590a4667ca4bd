// trajflow's tokenizer, shared by the actors (sampling) and the learner (training): the same text gives
// the same ids on both sides, and ids decode back to the exact text.
//
// Ids: 0..4 are specials, 5..260 the 256 UTF-8 bytes (fallback), then the word pieces of vocabulary.ts.
// A piece (pieces.ts) found in the word table is one token; a single character is its byte(s); an
// unknown word falls back to its bytes. Small and fixed on purpose: the policy is a small transformer
// trained from scratch on the built-in environments, where a 500-id vocabulary keeps the embedding and
// output head cheap. A real LLM's tokenizer would replace this whole module behind the same interface.
import type { Tokenizer } from './contract.js';
import { splitPieces } from './pieces.js';
import { WORD_PIECES_V1 } from './vocabulary.js';

export const TOKENIZER_NAME = 'trajflow-words-v1';

/** Special ids. OBS opens an observation in the context, ACT opens the policy's reply, EOS ends a reply. */
export const SpecialToken = { PAD: 0, BOS: 1, EOS: 2, OBS: 3, ACT: 4 } as const;
const SPECIAL_TEXT = ['<pad>', '<bos>', '<eos>', '<obs>', '<act>'];
export const BYTE_OFFSET = 5;
const WORD_OFFSET = BYTE_OFFSET + 256;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class WordTokenizer implements Tokenizer {
  readonly name = TOKENIZER_NAME;
  readonly vocabSize: number;
  private readonly idOf = new Map<string, number>();
  private readonly words: readonly string[];

  constructor(words: readonly string[] = WORD_PIECES_V1) {
    this.words = words;
    words.forEach((word, i) => this.idOf.set(word, WORD_OFFSET + i));
    this.vocabSize = WORD_OFFSET + words.length;
  }

  tokenize(text: string): number[] {
    const ids: number[] = [];
    for (const piece of splitPieces(text)) {
      const id = this.idOf.get(piece);
      if (id !== undefined) ids.push(id);
      else for (const byte of encoder.encode(piece)) ids.push(BYTE_OFFSET + byte);
    }
    return ids;
  }

  /** The id of a text that is exactly one token, or undefined (e.g. an action word the policy may generate). */
  singleTokenId(text: string): number | undefined {
    const ids = this.tokenize(text);
    return ids.length === 1 ? ids[0] : undefined;
  }

  /** Text of ids; specials are written as <eos> etc. only when `specials` is true, else skipped. */
  decode(ids: readonly number[], specials = false): string {
    let out = '';
    let bytes: number[] = [];
    const flush = () => {
      if (bytes.length > 0) out += decoder.decode(Uint8Array.from(bytes));
      bytes = [];
    };
    for (const id of ids) {
      if (id >= BYTE_OFFSET && id < WORD_OFFSET) {
        bytes.push(id - BYTE_OFFSET);
        continue;
      }
      flush();
      if (id < BYTE_OFFSET) out += specials ? (SPECIAL_TEXT[id] ?? '') : '';
      else if (id < this.vocabSize) out += this.words[id - WORD_OFFSET]!;
      else throw new RangeError(`token id ${id} is outside the vocabulary of ${this.vocabSize} ids (${this.name})`);
    }
    flush();
    return out;
  }

  /** Pieces of `text` that fell back to bytes: words missing from the table, non-ASCII characters (0 for the built-in environments). */
  fallbackPieces(text: string): string[] {
    return splitPieces(text).filter((piece) => !this.idOf.has(piece) && encoder.encode(piece).length > 1);
  }
}

let shared: WordTokenizer | undefined;
/** The one tokenizer of this version (stateless, so one instance serves every caller). */
export function trajflowTokenizer(): WordTokenizer {
  return (shared ??= new WordTokenizer());
}
