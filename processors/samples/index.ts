// Training samples with observation masking.
export * from './build-sample.js';
export * from './context-window.js';
export * from './sample-error.js';
export * from '../../tokenizer/contract.js';
