// Checkpoints: one directory per policy version, `<dir>/v<version>/`, holding
//   weights.bin    the parameters as little-endian float32, in parameterSpecs order
//   optimizer.bin  Adam's state (step count and moments), same encoding
//   manifest.json  version, model config, reply words, tokenizer, layout of both files, the consumed
//                  sample offsets, and the SHA-256 of weights.bin (the policy-version event's checksum)
// The manifest is written last and renamed into place, so a directory without one is an interrupted
// write and is ignored: the latest checkpoint is the highest version with a manifest. The learner
// resumes from it — weights, optimizer, update count and the offsets it had trained up to — so a crash
// neither trains twice on a sample nor skips one. Actors on other machines get the weights from the weights
// topic instead (weights-topic.ts), as a blob of weights.bin with this manifest minus the learner's state.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TrajflowError } from '../../core/errors.js';
import type { PolicyModelConfig } from '../model/config.js';
import type { LearnerStepEvent } from '../../schemas/index.js';

export interface TensorEntry {
  readonly name: string;
  readonly shape: readonly number[];
  readonly values: Float32Array;
}

export interface CheckpointManifest {
  readonly format: 'trajflow-checkpoint-v1';
  readonly runId: string;
  readonly version: number;
  readonly parentVersion: number | null;
  /** Learner updates done when the checkpoint was written. */
  readonly updates: number;
  readonly tokenizer: string;
  readonly replyWords: readonly string[];
  readonly model: PolicyModelConfig;
  readonly weights: readonly { name: string; shape: readonly number[]; offset: number; length: number }[];
  readonly optimizer: readonly { name: string; shape: readonly number[]; offset: number; length: number }[];
  /** Next sample offset to train on, per "topic/partition". */
  readonly offsets: Record<string, string>;
  /** SHA-256 of weights.bin, 64 lowercase hex digits. */
  readonly checksum: string;
  readonly createdAtMs: number;
  /** Ids of recently trained samples (dedupe across a restart). */
  readonly recentSampleIds: readonly string[];
  /** The metrics event of the update that made this version (republished on resume: a crash may have come before it was sent). */
  readonly lastStep: LearnerStepEvent | null;
  /** The highest actors' iteration whose rollout batch these weights were trained on (-1: none); absent in older checkpoints. */
  readonly trainedIteration?: number;
  /** The environment the run trains on, as the learner was told (`trajflow eval --run-id` evaluates on it); absent in older checkpoints. */
  readonly env?: RunEnvironment;
}

/** An environment and its options, as a run records them. */
export interface RunEnvironment {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
}

export interface Checkpoint {
  readonly manifest: CheckpointManifest;
  readonly directory: string;
  readonly weights: Map<string, Float32Array>;
  readonly optimizer: TensorEntry[];
}

export class CheckpointError extends TrajflowError {
  constructor(message: string) {
    super('CHECKPOINT', message);
  }
}

/** The checkpoint directory holds no manifest: never written, or pruned (the learner keeps only its last versions). */
export class CheckpointMissingError extends CheckpointError {}

export type CheckpointInput = Omit<CheckpointManifest, 'format' | 'weights' | 'optimizer' | 'checksum' | 'createdAtMs'> & {
  readonly weights: readonly TensorEntry[];
  readonly optimizer: readonly TensorEntry[];
};

const versionDir = (root: string, version: number) => join(root, `v${String(version).padStart(8, '0')}`);

/** Writes a checkpoint; returns its directory and manifest. */
export async function writeCheckpoint(root: string, input: CheckpointInput): Promise<{ directory: string; manifest: CheckpointManifest }> {
  const directory = versionDir(root, input.version);
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  const packed = pack(input.weights);
  const packedOptimizer = pack(input.optimizer);
  await writeFile(join(directory, 'weights.bin'), packed.bytes);
  await writeFile(join(directory, 'optimizer.bin'), packedOptimizer.bytes);
  const manifest: CheckpointManifest = {
    format: 'trajflow-checkpoint-v1',
    runId: input.runId,
    version: input.version,
    parentVersion: input.parentVersion,
    updates: input.updates,
    tokenizer: input.tokenizer,
    replyWords: input.replyWords,
    model: input.model,
    weights: packed.layout,
    optimizer: packedOptimizer.layout,
    offsets: input.offsets,
    checksum: sha256(packed.bytes),
    createdAtMs: Date.now(),
    recentSampleIds: input.recentSampleIds,
    lastStep: input.lastStep,
    ...(input.trainedIteration === undefined ? {} : { trainedIteration: input.trainedIteration }),
    ...(input.env === undefined ? {} : { env: input.env }),
  };
  await writeFile(join(directory, 'manifest.json.tmp'), JSON.stringify(manifest));
  await rename(join(directory, 'manifest.json.tmp'), join(directory, 'manifest.json'));
  return { directory, manifest };
}

/** Reads a checkpoint directory, verifying the weights against the manifest's (or an expected) checksum. */
export async function readCheckpoint(directory: string, expectedChecksum?: string): Promise<Checkpoint> {
  const manifest = await readManifest(directory);
  const bytes = await readFile(join(directory, 'weights.bin'));
  const checksum = sha256(bytes);
  for (const expected of [manifest.checksum, expectedChecksum]) {
    if (expected !== undefined && expected !== checksum) {
      throw new CheckpointError(`${directory}: weights.bin has SHA-256 ${checksum}, expected ${expected} (corrupt or replaced checkpoint)`);
    }
  }
  const weights = new Map(unpack(bytes, manifest.weights).map((t) => [t.name, t.values]));
  const optimizer = unpack(await readFile(join(directory, 'optimizer.bin')), manifest.optimizer);
  return { manifest, directory, weights, optimizer };
}

async function readManifest(directory: string): Promise<CheckpointManifest> {
  let manifest: CheckpointManifest;
  try {
    manifest = JSON.parse(await readFile(join(directory, 'manifest.json'), 'utf8')) as CheckpointManifest;
  } catch (error) {
    const message = `no readable checkpoint manifest in ${directory}: ${(error as Error).message}`;
    throw (error as NodeJS.ErrnoException).code === 'ENOENT' ? new CheckpointMissingError(message) : new CheckpointError(message);
  }
  if (manifest.format !== 'trajflow-checkpoint-v1') throw new CheckpointError(`${directory}: unknown checkpoint format ${String(manifest.format)}`);
  return manifest;
}

/**
 * The weights file of a checkpoint directory and what an actor needs to read it: the manifest without the
 * learner's own state (optimizer layout, sample offsets and ids, last step), checked against its checksum.
 */
export async function readWeightsBlob(directory: string): Promise<{ manifest: CheckpointManifest; bytes: Buffer }> {
  const manifest = await readManifest(directory);
  const bytes = await readFile(join(directory, 'weights.bin'));
  if (sha256(bytes) !== manifest.checksum) throw new CheckpointError(`${directory}: weights.bin has SHA-256 ${sha256(bytes)}, expected ${manifest.checksum}`);
  return { manifest: { ...manifest, optimizer: [], offsets: {}, recentSampleIds: [], lastStep: null }, bytes };
}

/** A checkpoint from a weights blob and its manifest, as they come off the weights topic (`source` names it in errors); no optimizer state. */
export function checkpointFromBlob(manifest: unknown, bytes: Buffer, source: string, expectedChecksum?: string): Checkpoint {
  const m = manifest as CheckpointManifest | null;
  if (m === null || typeof m !== 'object' || m.format !== 'trajflow-checkpoint-v1') {
    throw new CheckpointError(`${source}: unknown checkpoint format ${String(m?.format)}`);
  }
  const checksum = sha256(bytes);
  for (const expected of [m.checksum, expectedChecksum]) {
    if (expected !== undefined && expected !== checksum) throw new CheckpointError(`${source}: the weights have SHA-256 ${checksum}, expected ${expected}`);
  }
  return { manifest: m, directory: source, weights: new Map(unpack(bytes, m.weights).map((t) => [t.name, t.values])), optimizer: [] };
}

/** The newest complete checkpoint under `root`, or undefined. */
export async function latestCheckpoint(root: string): Promise<Checkpoint | undefined> {
  const versions = await completeVersions(root);
  for (const version of versions.reverse()) {
    try {
      return await readCheckpoint(versionDir(root, version));
    } catch (error) {
      // A corrupt newest checkpoint: fall back to the one before, loudly.
      console.error(`learner: skipping checkpoint v${version}: ${(error as Error).message}`);
    }
  }
  return undefined;
}

/**
 * Deletes all but the newest `keep` checkpoints (actors may still be loading a recent one). Version 0 —
 * the initial policy, the KL reference — is always kept.
 */
export async function pruneCheckpoints(root: string, keep: number): Promise<void> {
  const versions = (await completeVersions(root)).filter((v) => v !== 0);
  for (const version of versions.slice(0, Math.max(0, versions.length - keep))) {
    await rm(versionDir(root, version), { recursive: true, force: true });
  }
}

/** The checkpoint of one version under `root`. */
export function readVersion(root: string, version: number): Promise<Checkpoint> {
  return readCheckpoint(versionDir(root, version));
}

export function checkpointUri(directory: string): string {
  return pathToFileURL(directory).href;
}

export function checkpointPath(uri: string): string {
  if (!uri.startsWith('file://')) throw new CheckpointError(`weightsUri ${uri} is not a file:// URI`);
  return fileURLToPath(uri);
}

async function completeVersions(root: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir(root);
  } catch {
    return [];
  }
  const versions: number[] = [];
  for (const entry of entries) {
    const match = /^v(\d{8})$/.exec(entry);
    if (!match) continue;
    const files = await readdir(join(root, entry)).catch(() => [] as string[]);
    if (files.includes('manifest.json')) versions.push(Number(match[1]));
  }
  return versions.sort((a, b) => a - b);
}

function pack(entries: readonly TensorEntry[]): { bytes: Buffer; layout: CheckpointManifest['weights'] } {
  const total = entries.reduce((sum, e) => sum + e.values.length, 0);
  const bytes = Buffer.alloc(total * 4);
  const layout: { name: string; shape: readonly number[]; offset: number; length: number }[] = [];
  let offset = 0;
  for (const entry of entries) {
    for (let i = 0; i < entry.values.length; i++) bytes.writeFloatLE(entry.values[i]!, (offset + i) * 4);
    layout.push({ name: entry.name, shape: entry.shape, offset, length: entry.values.length });
    offset += entry.values.length;
  }
  return { bytes, layout };
}

function unpack(bytes: Buffer, layout: CheckpointManifest['weights']): TensorEntry[] {
  return layout.map(({ name, shape, offset, length }) => {
    if ((offset + length) * 4 > bytes.length) throw new CheckpointError(`tensor ${name} lies beyond the end of the file`);
    const values = new Float32Array(length);
    for (let i = 0; i < length; i++) values[i] = bytes.readFloatLE((offset + i) * 4);
    return { name, shape, values };
  });
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
