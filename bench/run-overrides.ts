// The training settings `bench learning` and `bench collapse` share: a preset's optimizer, model and loss,
// overridden by --lr/--epochs/--minibatches and the JSON flags --optimizer, --model, --loss and
// --estimator-options (checked as JSON objects; their fields are checked when the run builds them).
import { jsonObjectFlag, numberFlag, positiveInt } from '../infra/cli/flags.js';
import type { TrainPreset } from '../cli/train/presets.js';

export interface RunDefaults {
  readonly learningRate: number;
  readonly epochs: number;
  readonly minibatches: number;
  readonly warmupUpdates?: number;
  /** Model fields the bench sets over the preset's (the --model flag still overrides them). */
  readonly model?: Readonly<Record<string, unknown>>;
}

export function runOverrides(f: Partial<Record<string, string>>, preset: TrainPreset, defaults: RunDefaults) {
  const optimizer = {
    ...preset.optimizer,
    learningRate: numberFlag('lr', f['--lr'], { positive: true }) ?? defaults.learningRate,
    epochs: positiveInt('epochs', f['--epochs'], defaults.epochs),
    minibatches: positiveInt('minibatches', f['--minibatches'], defaults.minibatches),
    ...(defaults.warmupUpdates === undefined ? {} : { warmupUpdates: defaults.warmupUpdates }),
    ...jsonObjectFlag('optimizer', f['--optimizer'], { example: '{"epochs":8}' }),
  };
  const model = { ...preset.model, ...defaults.model, ...jsonObjectFlag('model', f['--model'], { example: '{"positionMode":"grid"}' }) };
  const loss = { ...preset.loss, ...jsonObjectFlag('loss', f['--loss'], { example: '{"entropyCoeff":0.001}' }) };
  const estimatorOptions = jsonObjectFlag('estimator-options', f['--estimator-options'], { example: '{"omega":3,"gamma":0.7}' });
  return { optimizer, model, loss, estimatorOptions };
}
