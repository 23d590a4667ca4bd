// Encodes the processors' samples and trajectories: from their steps' bytes where it can (a trajectory of
// WireSteps, a PlannedSample: schemas/wire-writer.ts, samples/write-planned-sample.ts), else with the codec.
// Either way the event decodes to the same value.
import type { EventCodec, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { WireTrajectoryWriter } from '../../schemas/wire-writer.js';
import { PlannedSample } from '../samples/planned-sample.js';
import { PlannedSampleWriter } from '../samples/write-planned-sample.js';

export class OutputEncoder {
  private readonly trajectories: WireTrajectoryWriter | null;
  private readonly samples: PlannedSampleWriter | null;

  constructor(private readonly codec: EventCodec) {
    this.trajectories = WireTrajectoryWriter.of(codec);
    this.samples = PlannedSampleWriter.of(codec);
  }

  trajectory(trajectory: TrajectoryEvent): Buffer {
    return this.trajectories?.encode(trajectory) ?? this.codec.encode('trajectory', trajectory);
  }

  sample(sample: TrainingSampleEvent): Buffer {
    return this.samples !== null && sample instanceof PlannedSample ? this.samples.encode(sample) : this.codec.encode('sample', sample);
  }
}
