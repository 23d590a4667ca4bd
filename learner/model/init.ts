// Initial weights, drawn in JavaScript from a seeded generator rather than by tfjs' random ops, so the
// same seed gives bit-identical weights on every backend (STYLE: reproducible first updates).
// GPT-2's scheme: normal(0, 0.02) for matrices and embeddings, residual projections scaled by
// 1/sqrt(2·layers), zeros for biases, ones for layer-norm gains.
import { Rng } from '../../core/rng.js';
import { GRID_EMBEDDINGS, GRID_NEIGHBOURS, type PolicyModelConfig } from './config.js';

export interface ParameterSpec {
  readonly name: string;
  readonly shape: readonly number[];
  readonly init: 'normal' | 'residual' | 'zeros' | 'ones';
}

/** Every parameter of the model, in a fixed order (checkpoints store them in this order). */
export function parameterSpecs(c: PolicyModelConfig): ParameterSpec[] {
  const d = c.width;
  const hidden = d * c.mlpRatio;
  const specs: ParameterSpec[] = [
    { name: 'embed/tokens', shape: [c.vocabSize, d], init: 'normal' },
    { name: 'embed/positions', shape: [c.contextLength, d], init: 'normal' },
  ];
  if (c.positionMode === 'grid') {
    specs.push({ name: 'embed/rows', shape: [GRID_EMBEDDINGS, d], init: 'normal' }, { name: 'embed/columns', shape: [GRID_EMBEDDINGS, d], init: 'normal' });
  }
  if (c.gridNeighbours) for (const direction of GRID_NEIGHBOURS) specs.push({ name: `embed/neighbour/${direction}`, shape: [c.vocabSize, d], init: 'normal' });
  for (let l = 0; l < c.layers; l++) {
    const p = `block${l}`;
    specs.push(
      { name: `${p}/ln1/gain`, shape: [d], init: 'ones' },
      { name: `${p}/ln1/bias`, shape: [d], init: 'zeros' },
      { name: `${p}/attn/qkv/kernel`, shape: [d, 3 * d], init: 'normal' },
      { name: `${p}/attn/qkv/bias`, shape: [3 * d], init: 'zeros' },
      { name: `${p}/attn/out/kernel`, shape: [d, d], init: 'residual' },
      { name: `${p}/attn/out/bias`, shape: [d], init: 'zeros' },
      { name: `${p}/ln2/gain`, shape: [d], init: 'ones' },
      { name: `${p}/ln2/bias`, shape: [d], init: 'zeros' },
      { name: `${p}/mlp/in/kernel`, shape: [d, hidden], init: 'normal' },
      { name: `${p}/mlp/in/bias`, shape: [hidden], init: 'zeros' },
      { name: `${p}/mlp/out/kernel`, shape: [hidden, d], init: 'residual' },
      { name: `${p}/mlp/out/bias`, shape: [d], init: 'zeros' },
    );
  }
  specs.push(
    { name: 'final_ln/gain', shape: [d], init: 'ones' },
    { name: 'final_ln/bias', shape: [d], init: 'zeros' },
    { name: 'head/kernel', shape: [d, c.vocabSize], init: 'normal' },
    { name: 'head/bias', shape: [c.vocabSize], init: 'zeros' },
  );
  // Last, so that a model with a value head starts from the same weights as one without.
  if (c.valueHead) specs.push({ name: 'value/kernel', shape: [d, 1], init: 'normal' }, { name: 'value/bias', shape: [1], init: 'zeros' });
  return specs;
}

/** The initial values of every parameter, as Float32Arrays in parameterSpecs order. */
export function initialValues(c: PolicyModelConfig): Map<string, Float32Array> {
  const rng = new Rng(c.seed, 11);
  const normal = () => {
    // Box–Muller; 1 − u keeps log away from 0.
    const u = 1 - rng.next();
    const v = rng.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const residualStd = 0.02 / Math.sqrt(2 * c.layers);
  const values = new Map<string, Float32Array>();
  for (const spec of parameterSpecs(c)) {
    const size = spec.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (spec.init === 'ones') data.fill(1);
    else if (spec.init === 'normal' || spec.init === 'residual') {
      const std = spec.init === 'normal' ? 0.02 : residualStd;
      for (let i = 0; i < size; i++) data[i] = normal() * std;
    }
    values.set(spec.name, data);
  }
  return values;
}
