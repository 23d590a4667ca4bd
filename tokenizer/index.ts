export * from './word-pieces.js';
export { splitPieces } from './pieces.js';
