// The fault suite's harness: a training run made of the same child processes `trajflow train` starts
// (`node bin/trajflow.mjs <part> …`), each under this run's own topic prefix and ClickHouse database, so a
// test can SIGKILL and restart any part, read every topic back, and count rows. Waits poll; nothing sleeps
// a fixed time. Not a spec file: the suites in this folder import it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient, type ClickHouseHttp } from '../../infra/clickhouse/http.js';
import { ensureTopics } from '../../infra/topics.js';
import type { EventName, EventTypes } from '../../schemas/index.js';
import { retryRetriable } from '../../streams/retry.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, type Backbone } from '../../streams/index.js';
import { groupSteps } from '../../bench/load/episodes.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { freePort } from '../../infra/free-port.js';

const CLI = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));

/** FrozenLake as `trajflow train` runs it (cli/train/presets.ts). */
export const FROZEN_LAKE_OPTIONS = JSON.stringify({ slippery: false, maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 });
/** A learner small enough for a 2-core machine: an update takes well under a second. */
export const SMALL_LEARNER = [
  '--width',
  '32',
  '--layers',
  '1',
  '--heads',
  '2',
  '--context',
  '128',
  '--batch-tokens',
  '1500',
  '--min-samples',
  '4',
  '--max-wait-ms',
  '500',
  '--max-staleness',
  '2',
  '--backend',
  'wasm',
];

/** One part of the run as a child process; restartable with the same arguments. */
export class Part {
  child!: ChildProcess;
  exited!: Promise<number | null>;
  /** Every line it printed (stdout and stderr), over all its lives. */
  readonly lines: string[] = [];
  /** Index in `lines` where the current life started. */
  lifeStart = 0;
  lives = 0;

  constructor(
    readonly name: string,
    private args: string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  start(args: string[] = this.args): this {
    this.args = args;
    this.lifeStart = this.lines.length;
    this.lives++;
    this.child = spawn(process.execPath, [CLI, this.name, ...args], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const life = this.lives;
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => this.lines.push(life > 1 ? `(life ${life}) ${line}` : line));
    }
    const child = this.child;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    return this;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Lines of the current life. */
  currentLines(): string[] {
    return this.lines.slice(this.lifeStart);
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    const descendants = this.descendants();
    if (this.running) this.child.kill(signal);
    const code = await this.exited;
    if (signal === 'SIGKILL') killAll(descendants);
    return code;
  }

  /** SIGTERM, then SIGKILL after `graceMs` — of the process relaunched by bin/trajflow.mjs too. */
  async stop(graceMs = 20_000): Promise<number | null> {
    if (!this.running) return this.exited;
    const descendants = this.descendants();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
      // A part that did not end by itself (a blocked event loop handles no SIGTERM) leaves bin/trajflow.mjs's
      // relaunched child behind, reparented and still running — through the rest of a test run.
      killAll(descendants);
    }
  }

  /** Pids of the part's descendant processes (Linux /proc), taken before a signal orphans them. */
  private descendants(): number[] {
    return this.child.pid === undefined ? [] : descendantsOf(this.child.pid);
  }

  /** Waits for a line of the current life matching `pattern`; fails early if the part exits. */
  async waitLine(pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    let match: RegExpMatchArray | null = null;
    await waitFor(
      () => {
        for (const line of this.currentLines()) if ((match = pattern.exec(line))) return true;
        if (!this.running) throw new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before ${what}:\n${this.tail()}`);
        return false;
      },
      `${this.name}: ${what}`,
      timeoutMs,
      100,
    );
    return match!;
  }

  tail(n = 25): string {
    // Its CPU time says whether a part that went quiet was spinning (a blocked event loop prints nothing
    // either) or waiting.
    const usage = this.running && this.child.pid !== undefined ? processTreeUsage(this.child.pid) : null;
    const head = usage ? [`  [${this.name}] (pid ${this.child.pid}: ${usage})`] : [];
    return [...head, ...this.lines.slice(-n).map((l) => `  [${this.name}] ${l}`)].join('\n');
  }
}

/** CPU seconds and states of a process and its descendants (Linux /proc), e.g. "cpu 12.3 s, states S,R"; null elsewhere. */
export function processTreeUsage(pid: number): string | null {
  let ticks = 0;
  const states: string[] = [];
  const visit = (p: number): void => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p}/stat`, 'utf8');
    } catch {
      return;
    }
    // Fields after the command name (which may hold spaces, so after its closing parenthesis): state is the
    // first, utime and stime the 12th and 13th (proc(5)).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    states.push(fields[0]!);
    ticks += Number(fields[11]) + Number(fields[12]);
  };
  for (const p of [pid, ...descendantsOf(pid)]) visit(p);
  // USER_HZ is 100 on Linux.
  return states.length === 0 ? null : `cpu ${(ticks / 100).toFixed(1)} s, states ${states.join(',')}`;
}

/** The pids below `pid` in the process tree (Linux /proc; none elsewhere). */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  for (const task of safeList(`/proc/${pid}/task`)) {
    for (const child of safeRead(`/proc/${pid}/task/${task}/children`).split(' ').filter(Boolean)) found.push(Number(child), ...descendantsOf(Number(child)));
  }
  return found;
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

export interface FaultRun {
  readonly prefix: string;
  readonly database: string;
  readonly runId: string;
  readonly config: TrajflowConfig;
  /** The environment the parts run with. */
  readonly env: NodeJS.ProcessEnv;
  readonly backbone: Backbone;
  readonly ch: ClickHouseHttp;
  readonly parts: Map<string, Part>;
  /** Starts (and registers) a part. */
  part(name: string, args: string[], key?: string): Part;
  /** The last lines of every part, for failure messages. */
  tails(): string;
  /** Stops every part still running, closes the backbone, deletes the topics, database and checkpoints. */
  cleanup(): Promise<void>;
}

/** A fresh prefix, database and run id; topics and tables created before any part starts. */
export async function createFaultRun(name: string): Promise<FaultRun> {
  const prefix = uniqueName(`faults-${name}`);
  const database = `test_faults_${name.replace(/[^a-z0-9]/gi, '_')}_${Date.now().toString(36)}_${randomBytes(2).toString('hex')}`;
  const runId = `fault-${name}-${randomBytes(3).toString('hex')}`;
  const env: NodeJS.ProcessEnv = { ...process.env, TRAJFLOW_TOPIC_PREFIX: prefix, TRAJFLOW_CLICKHOUSE_DB: database };
  const config = loadConfig(env);
  await ensureTopics(config);
  await applyMigrations(config);
  const backbone = await connectBackbone(config, { clientId: `test-faults-${name}` });
  const parts = new Map<string, Part>();
  const run: FaultRun = {
    prefix,
    database,
    runId,
    config,
    env,
    backbone,
    ch: clickHouseClient(config),
    parts,
    part(partName, args, key = partName) {
      const part = new Part(partName, args, env).start();
      parts.set(key, part);
      return part;
    },
    tails() {
      return [...parts.values()].map((p) => p.tail(15)).join('\n');
    },
    async cleanup() {
      await Promise.all([...parts.values()].map((p) => p.stop(5000)));
      await backbone.close().catch(() => undefined);
      // TRAJFLOW_FAULTS_KEEP=1 keeps topics, database and checkpoints for a post-mortem.
      if (process.env.TRAJFLOW_FAULTS_KEEP) {
        const { writeFile } = await import('node:fs/promises');
        const { tmpdir } = await import('node:os');
        for (const [key, part] of parts) await writeFile(join(tmpdir(), `${prefix}.${key}.log`), `${part.lines.join('\n')}\n`);
        console.log(`fault run kept: prefix ${prefix}, database ${database}, run ${runId}; part logs in ${join(tmpdir(), `${prefix}.*.log`)}`);
        return;
      }
      const admin = backbone.kafka.admin();
      try {
        await admin.connect();
        const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${prefix}.`));
        if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 });
      } catch {
        // best effort: a leftover topic under a unique prefix disturbs nobody
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
      await clickHouseClient(config, null)
        .exec(`DROP DATABASE IF EXISTS ${database}`)
        .catch(() => undefined);
      await rm(join(config.home, 'checkpoints', prefix), { recursive: true, force: true }).catch(() => undefined);
    },
  };
  return run;
}

/** Every event on a topic now (read_committed: aborted transactional output is never seen). */
export async function readTopic<N extends EventName>(run: Pick<FaultRun, 'backbone' | 'config'>, topic: string, event: N): Promise<EventTypes[N][]> {
  const replay = await createReplay(run.backbone.kafka, { topic: topicName(run.config, topic), decode: eventDecoder(run.backbone.codec, event), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
}

/** Messages on a topic (high − low watermark, summed over partitions); for transactional topics this counts markers too. */
export async function messageCount(run: Pick<FaultRun, 'backbone' | 'config'>, topic: string): Promise<number> {
  const admin = run.backbone.kafka.admin();
  await admin.connect();
  try {
    const offsets = await retryRetriable(() => admin.fetchTopicOffsets(topicName(run.config, topic)));
    return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

export async function countFinal(run: Pick<FaultRun, 'ch'>, table: string, where = '1'): Promise<number> {
  const [row] = await run.ch.queryJson<{ n: string }>(`SELECT count() AS n FROM ${table} FINAL WHERE ${where}`);
  return Number(row!.n);
}

/** The actors' arguments for iterations [first, first + iterations) of the run (2 groups × 4 FrozenLake episodes each). */
export function actorArgs(runId: string, first: number, iterations: number, extra: string[] = []): string[] {
  return [
    '--env',
    'FrozenLake',
    '--run-id',
    runId,
    '--groups',
    '2',
    '--group-size',
    '4',
    '--env-options',
    FROZEN_LAKE_OPTIONS,
    '--first-iteration',
    String(first),
    '--iterations',
    String(iterations),
    '--progress-ms',
    '2000',
    ...extra,
  ];
}

export interface ActorsSummaryLine {
  readonly episodes: number;
  readonly steps: number;
}

/** The actors' closing line "actors: done: run R, N episodes, S steps, …" of the current life. */
export async function actorsDone(actors: Part, timeoutMs: number): Promise<ActorsSummaryLine> {
  const match = await actors.waitLine(/actors: done: run \S+, (\d+) episodes, (\d+) steps/, 'the actors to finish their iterations', timeoutMs);
  return { episodes: Number(match[1]), steps: Number(match[2]) };
}

/** The group index in an actors' group id "<run>/g<index>". */
export function groupIndexOf(groupId: string): number {
  const match = /\/g(\d+)$/.exec(groupId);
  if (!match) throw new Error(`not an actors' group id: ${groupId}`);
  return Number(match[1]);
}

export interface Poster {
  /** Event ids of every step a 202 acknowledged. */
  readonly acknowledged: Set<string>;
  readonly state: { sent: number; accepted: number; failed: number; statuses: Record<string, number> };
  /** Requests acknowledged at or after `timeMs`. */
  acceptedAfter(timeMs: number): number;
  stop(): Promise<void>;
}

/**
 * An external environment publishing over HTTP: one whole group (4 episodes × 3 steps, run `runId`) per
 * POST /v1/steps every `everyMs`, until stopped. A request without an answer (server killed, refused) or
 * with an error status is not acknowledged: its steps may or may not have been written.
 */
export function startPoster(url: () => string, runId: string, everyMs = 300): Poster {
  const acknowledged = new Set<string>();
  const state = { sent: 0, accepted: 0, failed: 0, statuses: {} as Record<string, number> };
  const acceptedAt: number[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let group = 0; !stopped; group++) {
      const steps = groupSteps(runId, 1, 4, 3, group);
      state.sent++;
      let status = 'no answer';
      try {
        const response = await fetch(`${url()}/v1/steps`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ steps }),
          signal: AbortSignal.timeout(20_000),
        });
        status = String(response.status);
        await response.arrayBuffer();
        if (response.status === 202) {
          state.accepted++;
          acceptedAt.push(Date.now());
          for (const s of steps) acknowledged.add(s.eventId);
        }
      } catch {
        // no answer: not acknowledged
      }
      if (status !== '202') state.failed++;
      state.statuses[status] = (state.statuses[status] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    acknowledged,
    state,
    acceptedAfter: (timeMs) => acceptedAt.filter((t) => t >= timeMs).length,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

export interface Training {
  readonly sink: Part;
  readonly processors: Part;
  readonly learner: Part | undefined;
  readonly dashboard: Part;
  readonly actors: Part;
  readonly dashboardUrl: string;
}

/**
 * The parts of `trajflow train` (small settings), started like cli/train/command.ts does: sink,
 * processors, learner (unless `learner: false`), dashboard on a free port, actors for `iterations`.
 */
export async function startTraining(run: FaultRun, options: { iterations: number; processors?: string[]; learner?: boolean; actors?: string[] }): Promise<Training> {
  const port = await freePort();
  const sink = run.part('sink', ['--flush-ms', '200']);
  const processors = run.part('processors', ['--group-size', '4', ...(options.processors ?? [])]);
  const learner = options.learner === false ? undefined : run.part('learner', ['--run-id', run.runId, '--env', 'FrozenLake', ...SMALL_LEARNER]);
  const dashboard = run.part('dashboard', ['--port', String(port)]);
  const actors = run.part('actors', actorArgs(run.runId, 0, options.iterations, options.actors ?? ['--max-staleness', '2']));
  await dashboard.waitLine(/dashboard: API on/, 'the dashboard to listen', 90_000);
  return { sink, processors, learner, dashboard, actors, dashboardUrl: `http://127.0.0.1:${port}` };
}
