// @ts-check
// The pipeline page: lag and throughput of each consumer group (GET /v1/lag, polled; throughput is the
// growth of a group's committed offsets between two polls), and the dead letters with their reasons.
import { ApiError, getJson } from './api.js';
import { fmt, fmtTime, h, table } from './dom.js';
/** @import { Page, PageContext } from './page-types.js' */
/** @import { DeadLettersResponse, GroupLag, LagResponse } from './types.js' */

const POLL_MS = 5000;

/**
 * Records a group has committed, over every partition (unknown offsets count as 0).
 * @param {GroupLag} group
 */
function committed(group) {
  return group.topics.reduce((sum, topic) => sum + topic.partitions.reduce((n, p) => n + (p.committedOffset ?? 0), 0), 0);
}

/**
 * @param {LagResponse} report
 * @param {ReadonlyMap<string, number>} rates records per second by group id
 */
function lagTable(report, rates) {
  return table(
    `Consumer groups under ${report.prefix}. (total lag ${fmt(report.totalLag)} records)`,
    ['Group', 'State', 'Members', 'Lag (records)', 'Throughput (records/s)', 'Topics'],
    report.groups.map((group) => [
      group.groupId,
      group.state,
      String(group.members),
      fmt(group.lag),
      h('span', { class: 'rate' }, rates.has(group.groupId) ? fmt(rates.get(group.groupId), 1) : 'measuring…'),
      group.topics.length === 0
        ? 'nothing committed'
        : h(
            'details',
            {},
            h('summary', {}, `${group.topics.length} topic${group.topics.length === 1 ? '' : 's'}`),
            h(
              'ul',
              {},
              group.topics.map((t) => h('li', {}, `${t.topic}: lag ${fmt(t.lag)} over ${t.partitions.length} partition${t.partitions.length === 1 ? '' : 's'}`)),
            ),
          ),
    ]),
    { class: 'lag' },
  );
}

/** @param {DeadLettersResponse} body */
function deadLetters(body) {
  if (body.deadLetters.length === 0) return h('p', { class: 'empty', 'data-dead-letters': 0 }, 'No dead letters in the last 24 hours.');
  /** @type {Map<string, number>} */
  const byReason = new Map();
  for (const letter of body.deadLetters) byReason.set(letter.reason, (byReason.get(letter.reason) ?? 0) + 1);
  return h(
    'div',
    { 'data-dead-letters': body.deadLetters.length },
    h(
      'ul',
      { class: 'reasons', 'aria-label': 'Dead letters by reason' },
      [...byReason].map(([reason, n]) => h('li', {}, h('code', {}, reason), ` × ${n}`)),
    ),
    table(
      `The ${body.count} newest dead letters`,
      ['Time', 'Reason', 'Detail', 'Source', 'Payload'],
      body.deadLetters.map((d) => [
        fmtTime(d.eventTimeMs),
        h('code', {}, d.reason),
        d.detail,
        `${d.sourceTopic} [${d.sourcePartition}] @ ${d.sourceOffset}`,
        `${fmt(d.payloadBytes)} bytes`,
      ]),
      { class: 'dead-letters' },
    ),
  );
}

/**
 * @param {HTMLElement} root
 * @param {unknown} _route
 * @param {PageContext} context
 * @returns {Page}
 */
export function renderOps(root, _route, { signal, onError }) {
  const heading = h('h1', { tabindex: -1 }, 'Pipeline');
  const lagBox = h('div', {}, h('p', {}, 'Loading…'));
  const deadBox = h('div', {}, h('p', {}, 'Loading…'));
  root.append(
    heading,
    h(
      'section',
      { 'aria-labelledby': 'lag-h' },
      h('h2', { id: 'lag-h' }, 'Lag and throughput per consumer group'),
      h('p', { class: 'hint' }, `Refreshed every ${POLL_MS / 1000} s; throughput is measured between refreshes.`),
      lagBox,
    ),
    h('section', { 'aria-labelledby': 'dead-h' }, h('h2', { id: 'dead-h' }, 'Dead letters (last 24 hours)'), deadBox),
  );

  /** @type {{ at: number, committed: Map<string, number> } | null} */
  let previous = null;
  async function pollLag() {
    try {
      const report = await getJson('/v1/lag', { signal });
      const now = performance.now();
      /** @type {Map<string, number>} */
      const rates = new Map();
      if (previous !== null) {
        const seconds = (now - previous.at) / 1000;
        for (const group of report.groups) {
          const before = previous.committed.get(group.groupId);
          if (before !== undefined && seconds > 0) rates.set(group.groupId, Math.max(0, committed(group) - before) / seconds);
        }
      }
      previous = { at: now, committed: new Map(report.groups.map((g) => [g.groupId, committed(g)])) };
      lagBox.replaceChildren(lagTable(report, rates));
    } catch (error) {
      if (error instanceof ApiError && error.status === 503) lagBox.replaceChildren(h('p', { class: 'error' }, `Consumer lag is not available: ${error.detail}`));
      else throw error;
    }
  }

  pollLag().catch(onError);
  getJson('/v1/dead-letters?limit=200', { signal })
    .then((body) => deadBox.replaceChildren(deadLetters(body)))
    .catch(onError);
  const timer = setInterval(() => pollLag().catch(onError), POLL_MS);
  return { title: 'Pipeline', heading, dispose: () => clearInterval(timer) };
}
