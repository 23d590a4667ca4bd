// Types of build-wasm-kernels.mjs for the tests that check the committed kernel bytes.
/** A kernel's source compiled now, as base64 (compare with its generated constant). */
export function compiledKernel(constant: 'BATCH_MATMUL_WASM_BASE64' | 'STEP_WALK_WASM_BASE64'): Promise<string>;
