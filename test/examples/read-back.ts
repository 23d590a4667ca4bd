// What both examples print back (a JSON line per published episode, trajectory, sample and ClickHouse row), and the
// checks their tests share: every published episode came back on both topics and in both tables, each group whole
// at its announced size of 3.
import assert from 'node:assert/strict';

export interface PrintedLine {
  kind: 'published' | 'trajectory' | 'sample' | 'row';
  table?: string;
  episodeId?: string;
  episode_id?: string;
  [field: string]: unknown;
}

/** The printed lines of `kind` (rows of `table`), after checking the 6 episodes came back everywhere. */
export function checkReadBack(output: string): (kind: PrintedLine['kind'], table?: string) => PrintedLine[] {
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{"'))
    .map((line) => JSON.parse(line) as PrintedLine);
  const of = (kind: PrintedLine['kind'], table?: string) => lines.filter((l) => l.kind === kind && (table === undefined || l.table === table));
  const episodes = of('published')
    .map((l) => l.episodeId as string)
    .sort();
  assert.equal(episodes.length, 6);
  const ids = (xs: PrintedLine[]) => xs.map((x) => (x.episodeId ?? x.episode_id) as string).sort();
  assert.deepEqual(ids(of('trajectory')), episodes);
  assert.deepEqual(ids(of('sample')), episodes);
  assert.deepEqual(ids(of('row', 'trajectories')), episodes);
  assert.deepEqual(ids(of('row', 'samples')), episodes);
  // Each group closed whole at its announced size (3, not the processors' 8).
  for (const sample of of('sample')) assert.equal(sample.groupSize, 3);
  for (const row of of('row', 'samples')) assert.equal(row.group_size, 3);
  return of;
}
