// Two kernels of tfjs-backend-wasm 4.22 replaced where they cost the learner most (measured with
// tf.profile over one update of the bench learner's batch, see docs/results/learner.md):
// - BatchMatMul: the backend runs XNNPACK only for a single, untransposed product; every batched or
//   transposed one (all of attention, forward and backward) goes to a slow scalar loop. Those now run in
//   batch-matmul.wat, a SIMD kernel that shares the backend's memory (no copies); single untransposed
//   products still go to XNNPACK.
// - Identity: the backend copies the tensor, and tfjs' engine clones every tensor a gradient saves (both
//   inputs of each Mul, the output of each Exp/Sigmoid/Softmax…), so every update made a copy of each. The
//   CPU and WebGL backends share the data instead (tensors are immutable); this one now does too.
// Installed once, right after the WASM backend starts; `wasmKernelCounters` says how often the SIMD path ran.
// The kernel's source is batch-matmul.wat; its bytes (batch-matmul.wasm.ts) are built from it by
// scripts/build-wasm-kernels.mjs, so running needs no WebAssembly toolchain.
import * as tf from '@tensorflow/tfjs-core';
import { BATCH_MATMUL_WASM_BASE64 } from './batch-matmul.wasm.js';

interface WasmTensorData {
  readonly id: number;
  readonly memoryOffset: number;
}

/** The parts of tfjs-backend-wasm's BackendWasm these kernels use. */
interface WasmBackendInternals {
  readonly wasm: { readonly asm: { readonly memory: WebAssembly.Memory }; _malloc(bytes: number): number; _free(pointer: number): void };
  readonly dataIdMap: { get(dataId: object): WasmTensorData | undefined };
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  incRef(dataId: object): void;
  disposeData(dataId: object): boolean;
}

type Bmm = (
  a: number,
  b: number,
  c: number,
  packed: number,
  batch: number,
  m: number,
  n: number,
  k: number,
  aBatch: number,
  aRs: number,
  aKs: number,
  bBatch: number,
  bKs: number,
  bJs: number,
) => void;

/** How many BatchMatMuls took the SIMD kernel and how many the backend's own (for tests and benches). */
export const wasmKernelCounters = { simdBatchMatMul: 0, backendBatchMatMul: 0 };

let enabled = true;

/**
 * Routes BatchMatMul and Identity back to the backend's own kernels (false) or to these (true, the default):
 * for side-by-side measurements and for tests that compare the two.
 */
export function useWasmKernels(on: boolean): void {
  enabled = on;
}

let installed: Promise<InstalledKernels> | undefined;

export interface InstalledKernels {
  readonly batchMatMul: boolean;
  readonly identity: boolean;
}

/** Replaces BatchMatMul and Identity on the 'wasm' backend (which must be the active one). Idempotent. */
export function installWasmKernels(): Promise<InstalledKernels> {
  return (installed ??= install());
}

async function install(): Promise<InstalledKernels> {
  const backend = tf.backend() as unknown as WasmBackendInternals;
  // TRAJFLOW_WASM_KERNELS=off keeps the backend's own kernels (same results, bit for bit; slower).
  if (process.env['TRAJFLOW_WASM_KERNELS'] === 'off') return { batchMatMul: false, identity: false };
  if (tf.getBackend() !== 'wasm' || !backend.wasm?.asm?.memory) return { batchMatMul: false, identity: false };
  replaceIdentity();
  const bmm = await compileKernel(backend.wasm.asm.memory);
  if (bmm) replaceBatchMatMul(bmm, backend);
  return { batchMatMul: bmm !== undefined, identity: true };
}

function replaceIdentity(): void {
  const original = tf.getKernel(tf.Identity, 'wasm');
  if (!original) return;
  tf.unregisterKernel(tf.Identity, 'wasm');
  tf.registerKernel({
    ...original,
    kernelFunc: (args) => {
      const x = args.inputs['x'] as tf.TensorInfo;
      if (!enabled || x.dtype === 'string') return original.kernelFunc(args);
      (args.backend as unknown as WasmBackendInternals).incRef(x.dataId);
      return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
    },
  });
}

/** batch-matmul.wat, compiled by scripts/build-wasm-kernels.mjs, linked to the backend's memory. */
async function compileKernel(memory: WebAssembly.Memory): Promise<Bmm | undefined> {
  const module = await WebAssembly.compile(Buffer.from(BATCH_MATMUL_WASM_BASE64, 'base64'));
  // A threaded build shares its memory; this module imports an unshared one and would not link — then
  // the backend's own kernel stays.
  const instance = await WebAssembly.instantiate(module, { env: { memory } }).catch(() => undefined);
  return instance?.exports['bmm'] as Bmm | undefined;
}

function replaceBatchMatMul(bmm: Bmm, backend: WasmBackendInternals): void {
  const memory = backend.wasm.asm.memory;
  const original = tf.getKernel(tf.BatchMatMul, 'wasm');
  if (!original) return;
  let packed = 0;
  let packedBytes = 0;
  tf.unregisterKernel(tf.BatchMatMul, 'wasm');
  const offset = (t: tf.TensorInfo) => backend.dataIdMap.get(t.dataId)!.memoryOffset;
  tf.registerKernel({
    ...original,
    kernelFunc: (args) => {
      const a = args.inputs['a'] as tf.TensorInfo;
      const b = args.inputs['b'] as tf.TensorInfo;
      const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
      // The kernel is linked to the memory of the backend instance it was installed on; XNNPACK's one
      // product (batch 1, no transposes) beats it; odd dtypes and broadcasts the plan does not cover stay
      // with the backend too.
      const usable = enabled && (args.backend as unknown as WasmBackendInternals).wasm.asm.memory === memory && a.dtype === 'float32' && b.dtype === 'float32';
      const plan = usable ? planProduct(a.shape, b.shape, transposeA, transposeB) : undefined;
      if (!plan || (plan.batch === 1 && !transposeA && !transposeB)) {
        wasmKernelCounters.backendBatchMatMul++;
        return original.kernelFunc(args);
      }
      const needed = plan.k * plan.n8 * 4 + 128; // packed B, then the 4×8 tile's totals
      if (needed > packedBytes) {
        if (packed) backend.wasm._free(packed);
        packedBytes = Math.max(needed, 64 * 1024);
        packed = backend.wasm._malloc(packedBytes) >>> 0;
      }
      const out = backend.makeOutput(plan.outShape, 'float32');
      bmm(offset(a), offset(b), offset(out), packed, plan.batch, plan.m, plan.n, plan.k, plan.aBatch, plan.aRs, plan.aKs, plan.bBatch, plan.bKs, plan.bJs);
      wasmKernelCounters.simdBatchMatMul++;
      return out;
    },
  });
}

export interface ProductPlan {
  readonly outShape: number[];
  readonly batch: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** n rounded up to a multiple of 8 (the packed B's row length). */
  readonly n8: number;
  readonly aBatch: number;
  readonly aRs: number;
  readonly aKs: number;
  readonly bBatch: number;
  readonly bKs: number;
  readonly bJs: number;
}

/**
 * Strides (in elements) of op(A)[b][i, k] and op(B)[b][k, j] for the kernel, or undefined when the batch
 * dimensions differ other than by one side having a single matrix (then stride 0 broadcasts it).
 */
export function planProduct(aShape: readonly number[], bShape: readonly number[], transposeA: boolean, transposeB: boolean): ProductPlan | undefined {
  if (aShape.length < 2 || bShape.length < 2) return undefined;
  const [aRows, aCols] = aShape.slice(-2) as [number, number];
  const [bRows, bCols] = bShape.slice(-2) as [number, number];
  const m = transposeA ? aCols : aRows;
  const k = transposeA ? aRows : aCols;
  const n = transposeB ? bRows : bCols;
  if ((transposeB ? bCols : bRows) !== k) return undefined;
  const aOuter = aShape.slice(0, -2);
  const bOuter = bShape.slice(0, -2);
  const size = (dims: readonly number[]) => dims.reduce((p, d) => p * d, 1);
  const aCount = size(aOuter);
  const bCount = size(bOuter);
  const sameOuter = aOuter.length === bOuter.length && aOuter.every((d, i) => d === bOuter[i]);
  let outer: number[];
  if (sameOuter) outer = [...aOuter];
  else if (bCount === 1 && aOuter.length >= bOuter.length) outer = [...aOuter];
  else if (aCount === 1 && bOuter.length >= aOuter.length) outer = [...bOuter];
  else return undefined;
  const batch = size(outer);
  // The kernel addresses memory with 32-bit offsets.
  if (batch * m * n >= 2 ** 29 || aCount * m * k >= 2 ** 29 || bCount * k * n >= 2 ** 29) return undefined;
  return {
    outShape: [...outer, m, n],
    batch,
    m,
    n,
    k,
    n8: Math.ceil(n / 8) * 8,
    aBatch: aCount === 1 && batch > 1 ? 0 : m * k,
    aRs: transposeA ? 1 : k,
    aKs: transposeA ? m : 1,
    bBatch: bCount === 1 && batch > 1 ? 0 : k * n,
    bKs: transposeB ? 1 : n,
    bJs: transposeB ? k : 1,
  };
}
