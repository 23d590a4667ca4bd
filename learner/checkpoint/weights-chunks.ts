// Policy weights as records of a compacted Kafka topic (<prefix>.policy.weights), so an actor that reaches
// Kafka reaches them without the learner's disk. Pure: the records a version becomes, the tombstones that
// retire it, and the reassembly a reader does, with its checks. The Kafka I/O is weights-topic.ts.
//
// One version of a run is `chunks` records keyed `<runId>/v<version>/<index>` holding the weights file in
// slices of at most `chunkBytes`, then one manifest record keyed `<runId>/v<version>/manifest` (JSON: the
// chunk count, the byte length, the SHA-256 — the policy-version event's checksum — and the checkpoint's
// model description). The manifest is written last, so on the one partition a reader that sees it has
// seen every chunk before it; a chunk that is missing or of the wrong length then, or bytes whose SHA-256
// differs, is an error, never a partial load. Compaction keeps the newest record per key; the learner
// retires old versions with tombstones (manifest first, then the chunks).
import { createHash } from 'node:crypto';

/** Kafka's default message.max.bytes is 1,048,588: a chunk of 1,000,000 bytes, its key and the batch header fit under it on any broker. */
export const DEFAULT_CHUNK_BYTES = 1_000_000;

export const WEIGHTS_FORMAT = 'trajflow-weights-v1';

export interface WeightsManifest {
  readonly format: typeof WEIGHTS_FORMAT;
  readonly runId: string;
  readonly version: number;
  readonly chunks: number;
  readonly bytes: number;
  /** SHA-256 of the reassembled bytes, 64 lowercase hex digits. */
  readonly sha256: string;
  /** What the bytes mean (the checkpoint's manifest, without the learner's own state); opaque here. */
  readonly checkpoint: unknown;
}

export interface WeightsRecord {
  readonly key: string;
  /** null: a tombstone. */
  readonly value: Buffer | null;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const chunkKey = (runId: string, version: number, index: number) => `${runId}/v${version}/${index}`;
const manifestKey = (runId: string, version: number) => `${runId}/v${version}/manifest`;

/** The records of one version: its chunks in order, then its manifest. */
export function weightsRecords(runId: string, version: number, bytes: Uint8Array, checkpoint: unknown, chunkBytes = DEFAULT_CHUNK_BYTES): WeightsRecord[] {
  if (!Number.isInteger(chunkBytes) || chunkBytes < 1) throw new RangeError(`chunkBytes must be a positive integer, got ${chunkBytes}`);
  const chunks = chunkCount(bytes.length, chunkBytes);
  const records: WeightsRecord[] = [];
  for (let i = 0; i < chunks; i++) {
    records.push({ key: chunkKey(runId, version, i), value: Buffer.from(bytes.subarray(i * chunkBytes, Math.min(bytes.length, (i + 1) * chunkBytes))) });
  }
  const manifest: WeightsManifest = { format: WEIGHTS_FORMAT, runId, version, chunks, bytes: bytes.length, sha256: sha256Hex(bytes), checkpoint };
  records.push({ key: manifestKey(runId, version), value: Buffer.from(JSON.stringify(manifest)) });
  return records;
}

/** Chunks of a blob of `bytes` (at least one, so an empty blob still has a record to point at). */
export const chunkCount = (bytes: number, chunkBytes = DEFAULT_CHUNK_BYTES): number => Math.max(1, Math.ceil(bytes / chunkBytes));

/** Tombstones that retire one version of `chunks` chunks: the manifest first, so no reader sees a manifest without its chunks. */
export function retireRecords(runId: string, version: number, chunks: number): WeightsRecord[] {
  return [manifestKey(runId, version), ...Array.from({ length: chunks }, (_, i) => chunkKey(runId, version, i))].map((key) => ({ key, value: null }));
}

/** The version to retire once `published` is out, keeping the newest `keep` (null: none is old enough). */
export function versionToRetire(published: number, keep: number): number | null {
  if (!Number.isInteger(keep) || keep < 1) throw new RangeError(`keep must be a positive integer, got ${keep}`);
  const old = published - keep;
  return old >= 0 ? old : null;
}

/** A version as a reader has it: not (yet) there, complete and verified, or broken. */
export type WeightsState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'complete'; readonly manifest: WeightsManifest; readonly bytes: Buffer }
  | { readonly kind: 'broken'; readonly reason: string };

interface Parsed {
  readonly runId: string;
  readonly version: number;
  /** A chunk index, or 'manifest'. */
  readonly part: number | 'manifest';
}

function parseKey(key: string): Parsed | null {
  const match = /^(.+)\/v(\d+)\/(\d+|manifest)$/.exec(key);
  if (!match) return null;
  return { runId: match[1]!, version: Number(match[2]), part: match[3] === 'manifest' ? 'manifest' : Number(match[3]) };
}

/**
 * The versions a reader has seen, built record by record in log order. Applying the same records again
 * (a reader that starts over after an outage) gives the same state. Only versions of `runId` are kept.
 */
export class WeightsAssembly {
  private readonly chunks = new Map<number, Map<number, Buffer>>();
  private readonly manifests = new Map<number, Buffer>();
  /** Records whose key is not this format's (counted, never fatal: the topic is compacted and shared). */
  ignored = 0;

  constructor(private readonly runId: string) {}

  apply(key: string, value: Buffer | null): void {
    const parsed = parseKey(key);
    if (parsed === null) {
      this.ignored++;
      return;
    }
    if (parsed.runId !== this.runId) return;
    const { version, part } = parsed;
    if (part === 'manifest') {
      if (value === null) this.manifests.delete(version);
      else this.manifests.set(version, value);
      return;
    }
    const parts = this.chunks.get(version) ?? new Map<number, Buffer>();
    if (value === null) parts.delete(part);
    else parts.set(part, value);
    if (parts.size === 0) this.chunks.delete(version);
    else this.chunks.set(version, parts);
  }

  /** Drops every version below `version` (a reader that has loaded `version` needs none older). */
  forgetBelow(version: number): void {
    for (const v of [...this.manifests.keys(), ...this.chunks.keys()]) {
      if (v < version) {
        this.manifests.delete(v);
        this.chunks.delete(v);
      }
    }
  }

  /** The version's weights, reassembled and checked against its manifest's length and SHA-256 (and `expectedSha256` when given). */
  state(version: number, expectedSha256?: string): WeightsState {
    const raw = this.manifests.get(version);
    if (raw === undefined) return { kind: 'absent' };
    const label = `${this.runId} v${version}`;
    let manifest: WeightsManifest;
    try {
      manifest = checkManifest(JSON.parse(raw.toString('utf8')), this.runId, version);
    } catch (error) {
      return { kind: 'broken', reason: `${label}: unreadable weights manifest (${(error as Error).message})` };
    }
    const parts = this.chunks.get(version) ?? new Map<number, Buffer>();
    const missing = Array.from({ length: manifest.chunks }, (_, i) => i).filter((i) => !parts.has(i));
    if (missing.length > 0) {
      return { kind: 'broken', reason: `${label}: chunk(s) ${missing.slice(0, 10).join(', ')} of ${manifest.chunks} missing before its manifest (torn write or retired)` };
    }
    const bytes = Buffer.concat(Array.from({ length: manifest.chunks }, (_, i) => parts.get(i)!));
    if (bytes.length !== manifest.bytes) return { kind: 'broken', reason: `${label}: chunks hold ${bytes.length} bytes, the manifest says ${manifest.bytes}` };
    const sha = sha256Hex(bytes);
    if (sha !== manifest.sha256) return { kind: 'broken', reason: `${label}: weights have SHA-256 ${sha}, the manifest says ${manifest.sha256}` };
    if (expectedSha256 !== undefined && sha !== expectedSha256) {
      return { kind: 'broken', reason: `${label}: weights have SHA-256 ${sha}, the policy-version event says ${expectedSha256}` };
    }
    return { kind: 'complete', manifest, bytes };
  }
}

function checkManifest(json: unknown, runId: string, version: number): WeightsManifest {
  const m = json as Partial<WeightsManifest> | null;
  if (m === null || typeof m !== 'object') throw new Error('not a JSON object');
  if (m.format !== WEIGHTS_FORMAT) throw new Error(`format ${String(m.format)}, expected ${WEIGHTS_FORMAT}`);
  if (m.runId !== runId || m.version !== version) throw new Error(`it names ${String(m.runId)} v${String(m.version)}`);
  if (!Number.isInteger(m.chunks) || m.chunks! < 1) throw new Error(`chunks ${String(m.chunks)} is not a positive integer`);
  if (!Number.isInteger(m.bytes) || m.bytes! < 0) throw new Error(`bytes ${String(m.bytes)} is not a byte count`);
  if (typeof m.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(m.sha256)) throw new Error('sha256 is not 64 lowercase hex digits');
  return m as WeightsManifest;
}

/** The weightsUri of a version on the weights topic. */
export function weightsTopicUri(topic: string, runId: string, version: number): string {
  return `kafka:${topic}/${encodeURIComponent(runId)}/v${version}`;
}

/** The topic, run and version a `kafka:` weightsUri names, or null for another scheme. */
export function parseWeightsTopicUri(uri: string): { topic: string; runId: string; version: number } | null {
  const match = /^kafka:([A-Za-z0-9._-]+)\/([^/]+)\/v(\d+)$/.exec(uri);
  if (!match) return null;
  return { topic: match[1]!, runId: decodeURIComponent(match[2]!), version: Number(match[3]) };
}
