export * from './tokenizer.js';
export { splitPieces } from './pieces.js';
