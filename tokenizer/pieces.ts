// How text is cut into pieces before the vocabulary lookup. GPT-style: a word keeps the one space in
// front of it (" Dragon" is one piece); digits stand alone (numbers of any size with 10 ids); a capital
// letter not followed by lower-case ones stands alone, so grid rows such as "OOGP" (FrozenLake, Sokoban)
// become one token per cell and the model sees the map's structure; every other character (newline,
// grid symbols, punctuation) is a piece of its own. Concatenating the pieces
// gives the text back exactly, so tokenizing is lossless.
const PIECE = / ?[A-Z]?[a-z]+| ?[A-Z]| ?\d|[\s\S]/gu;

export function splitPieces(text: string): string[] {
  return text.match(PIECE) ?? [];
}
