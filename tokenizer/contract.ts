// The tokenizer used for observations whose step event carries no token ids.
//
// trajflow has no real tokenizer yet: actors that run a model send observationTokenIds themselves,
// and those are always preferred. For the rest, `byteTokenizer` is a stand-in: deterministic,
// lossless (decodeByteTokens gives the text back) and with a fixed vocabulary of 259 ids, but its ids
// are NOT the policy's vocabulary. Inject the policy's own Tokenizer when one exists.

export interface Tokenizer {
  /** Identifies the vocabulary, for logs. */
  readonly name: string;
  /** Token ids of `text`; the same text must always give the same ids. */
  tokenize(text: string): number[];
}

/** Ids 0..2 stay free for the usual pad/bos/eos specials; byte b is id b + 3. */
export const BYTE_TOKEN_OFFSET = 3;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One token per UTF-8 byte (ids 3..258). A stand-in, see the file header. */
export const byteTokenizer: Tokenizer = {
  name: 'utf8-bytes',
  tokenize(text: string): number[] {
    const bytes = encoder.encode(text);
    const ids = new Array<number>(bytes.length);
    for (let i = 0; i < bytes.length; i++) ids[i] = bytes[i]! + BYTE_TOKEN_OFFSET;
    return ids;
  },
};

/** Inverse of byteTokenizer.tokenize (for readable logs and tests); ids outside 3..258 are skipped. */
export function decodeByteTokens(ids: readonly number[]): string {
  const bytes = ids.filter((id) => id >= BYTE_TOKEN_OFFSET && id < BYTE_TOKEN_OFFSET + 256).map((id) => id - BYTE_TOKEN_OFFSET);
  return decoder.decode(Uint8Array.from(bytes));
}
