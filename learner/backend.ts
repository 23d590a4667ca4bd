// Which TensorFlow.js backend the learner and the policy run on, in this order:
// tfjs-node-gpu (CUDA) when installed, tfjs-node when installed, else WASM, else the plain CPU backend.
// The native packages are optional and not in package.json: their install script downloads
// libtensorflow, which fails on machines without Google's storage; `npm install @tensorflow/tfjs-node`
// where it works is all it takes to use them. Everything else imports only @tensorflow/tfjs-core.
import * as tf from '@tensorflow/tfjs-core';
// tfjs-core alone registers no gradients (and its ESM register_all_gradients does not load under Node's
// ESM resolver); the @tensorflow/tfjs bundle registers them all into the shared engine.
import '@tensorflow/tfjs';
import { ConfigError } from '../core/errors.js';
import { installWasmKernels } from './kernels/wasm-kernels.js';

export const BACKEND_CHOICES = ['auto', 'node-gpu', 'node', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

export interface BackendInfo {
  /** tfjs' name of the backend: 'tensorflow', 'wasm' or 'cpu'. */
  readonly name: string;
  /** What it is, for the learner's start line, e.g. "wasm (2 threads)". */
  readonly description: string;
}

const NATIVE: Record<'node-gpu' | 'node', string> = { 'node-gpu': '@tensorflow/tfjs-node-gpu', node: '@tensorflow/tfjs-node' };

export function parseBackendChoice(value: string): BackendChoice {
  if ((BACKEND_CHOICES as readonly string[]).includes(value)) return value as BackendChoice;
  throw new ConfigError(`backend "${value}" is not one of ${BACKEND_CHOICES.join(', ')}; use auto to take the fastest one installed`);
}

let selected: Promise<BackendInfo> | undefined;

/** Selects the backend once per process (later calls return the first answer). */
export function selectBackend(choice: BackendChoice = 'auto'): Promise<BackendInfo> {
  return (selected ??= pick(choice));
}

async function pick(choice: BackendChoice): Promise<BackendInfo> {
  if (choice === 'auto') {
    for (const candidate of ['node-gpu', 'node', 'wasm', 'cpu'] as const) {
      const info = await tryBackend(candidate).catch(() => undefined);
      if (info) return info;
    }
    throw new ConfigError('no TensorFlow.js backend could start (not even cpu); reinstall with npm install');
  }
  return tryBackend(choice);
}

async function tryBackend(choice: Exclude<BackendChoice, 'auto'>): Promise<BackendInfo> {
  if (choice === 'node-gpu' || choice === 'node') {
    try {
      await import(NATIVE[choice]);
    } catch {
      throw new ConfigError(
        `backend ${choice} needs ${NATIVE[choice]}, which is not installed; npm install ${NATIVE[choice]} (needs access to Google's storage) or use --backend wasm`,
      );
    }
    if (!(await tf.setBackend('tensorflow'))) throw new ConfigError(`${NATIVE[choice]} is installed but its backend did not start`);
    await tf.ready();
    return { name: 'tensorflow', description: choice === 'node-gpu' ? 'tensorflow (tfjs-node-gpu, CUDA)' : 'tensorflow (tfjs-node, native CPU)' };
  }
  if (choice === 'wasm') {
    const wasm = await import('@tensorflow/tfjs-backend-wasm');
    if (!(await tf.setBackend('wasm'))) throw new ConfigError('the wasm backend did not start');
    await tf.ready();
    const kernels = await installWasmKernels();
    const threads = `${wasm.getThreadsCount()} thread${wasm.getThreadsCount() === 1 ? '' : 's'}`;
    return { name: 'wasm', description: `wasm (${threads}, ${kernels.batchMatMul ? "trajflow's SIMD batched matMul" : "the backend's own kernels"})` };
  }
  await import('@tensorflow/tfjs-backend-cpu');
  if (!(await tf.setBackend('cpu'))) throw new ConfigError('the cpu backend did not start');
  await tf.ready();
  return { name: 'cpu', description: 'cpu (plain JavaScript, slow)' };
}
