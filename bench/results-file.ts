// A bench's result as data: the JSON line `--json` prints carries what reproduces it (the command, the commit,
// the date; the bench adds its machine), and `--save` also writes it under docs/results/, where
// scripts/docs-results.mjs turns the files into the results pages (docs/results/README.md). Figures are read
// from these files, never copied by hand.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RESULTS_DIR = fileURLToPath(new URL('../docs/results/', import.meta.url));

export interface BenchProvenance {
  readonly command: string;
  readonly commit: string;
  readonly date: string;
}

/** The commit the bench ran on; `+dirty` when the working tree had changes (the figures may not reproduce from the commit alone). */
function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export function provenance(args: readonly string[], now: Date = new Date()): BenchProvenance {
  return { command: ['trajflow', 'bench', ...args.filter((a) => a !== '--save')].join(' '), commit: commitOf(), date: now.toISOString() };
}

/** The file name a saved result gets: the bench, a caller's label, the date and time (so runs never overwrite each other). */
export function resultFileName(bench: string, label: string | undefined, date: string): string {
  const stamp = date.replace(/[:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${[bench, label, stamp].filter((part) => part !== undefined && part !== '').join('-')}.json`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * Prints the result as one JSON line (with --json) and writes it to docs/results/ (with --save). `label`
 * names the run in the file name (e.g. `real-frozenlake-s1`).
 */
export function emitResult(args: readonly string[], result: { readonly bench: string } & Record<string, unknown>, label?: string, dir: string = RESULTS_DIR): void {
  const record = { ...result, ...provenance(args) };
  const line = JSON.stringify(record);
  if (args.includes('--json')) console.log(line);
  if (args.includes('--save')) {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, resultFileName(result.bench, label, record.date));
    writeFileSync(path, `${line}\n`);
    console.error(`bench: result saved to ${path}`);
  }
}
