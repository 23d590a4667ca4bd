import { TrajflowError } from '../../core/errors.js';

/** A trajectory that cannot become a valid training sample (no action tokens, misaligned inputs ...); the caller drops it with this message as the reason. Not retriable: the same input fails the same way. */
export class SampleError extends TrajflowError {
  constructor(message: string) {
    super('SAMPLE', message);
  }
}
