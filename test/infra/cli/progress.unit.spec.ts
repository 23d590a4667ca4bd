// Unit: the progress line (bar, count, rate, time left) and how it is written with and without a terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { drawDue, progressBar, renderProgress } from '../../../infra/cli/progress.js';

test('a known total: bar, percentage, count, rate and time left', () => {
  assert.equal(
    renderProgress({ label: 'eval', done: 50, total: 200, unit: 'episodes', elapsedMs: 10_000 }),
    'eval  [######------------------]   25%  50/200 episodes  5.0 episodes/s  eta 30s',
  );
  assert.equal(
    renderProgress({ label: 'eval', done: 200, total: 200, unit: 'episodes', elapsedMs: 125_000, detail: 'done' }),
    'eval  [########################]  100%  200/200 episodes  1.6 episodes/s  2m05s  done',
  );
  assert.equal(renderProgress({ label: 'train', done: 7, unit: 'updates', elapsedMs: 3_600_000 * 2 }), 'train  7 updates  0.00 updates/s  2h00m');
});

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns: 200, write: (t: string) => void writes.push(t) } };
}

test('without a terminal: plain lines at most once per interval, and a last one at the end', () => {
  let t = 0;
  const { writes, stream } = fakeStream(false);
  const bar = progressBar({ label: 'replay', total: 10, unit: 'samples', stream, now: () => t, intervalMs: 1000 });
  for (let i = 0; i < 10; i++) {
    t += 300;
    bar.tick();
  }
  bar.finish();
  bar.finish();
  assert.ok(
    writes.every((w) => w.endsWith('\n') && !w.includes('\r')),
    'no carriage returns in logs',
  );
  // t=300 (first), 1500, 2700 within the interval rule, plus the final line.
  assert.equal(writes.length, 4);
  assert.match(writes.at(-1)!, /10\/10 samples/);
});

test('on a terminal: redrawn in place; a log line clears the bar and the bar comes back under it', () => {
  let t = 0;
  const { writes, stream } = fakeStream(true);
  const bar = progressBar({ label: 'train', total: 4, unit: 'updates', stream, now: () => t, intervalMs: 100 });
  t = 200;
  bar.tick(1);
  bar.log('learner: update 1');
  t = 400;
  bar.tick(3);
  bar.finish();
  assert.deepEqual(
    writes.map((w) => w.replace(/\x1b\[2K/g, '<clr>').replace(/ {2}.*$/s, '')),
    ['\r<clr>train', '\r<clr>', 'learner: update 1\n', '\r<clr>train', '\r<clr>train', '\r<clr>train', '\n'],
  );
});

test('a redraw is due once the last one is an interval old, and always before the first', () => {
  assert.equal(drawDue(-Infinity, 0, 10_000), true);
  assert.equal(drawDue(300, 1299, 1000), false);
  assert.equal(drawDue(300, 1300, 1000), true);
});
