// @ts-check
// The collapse panel's pieces that are not charts: gradient-norm spikes and the list of alerts.
import { fmt, fmtTime, h } from './dom.js';
/** @import { AlertView } from './types.js' */

/** A gradient norm is a spike when it is over SPIKE_FACTOR times the median of the SPIKE_WINDOW before it. */
export const SPIKE_FACTOR = 3;
export const SPIKE_WINDOW = 20;
const MIN_HISTORY = 3;

/**
 * One flag per value: true where the value spikes against the median of the values before it.
 * @param {ReadonlyArray<number | null>} values
 */
export function spikeFlags(values) {
  /** @type {number[]} */
  const history = [];
  return values.map((value) => {
    let spike = false;
    if (value !== null && Number.isFinite(value) && history.length >= MIN_HISTORY) {
      const sorted = [...history].sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      // Both indexes are in range: the history holds at least MIN_HISTORY values.
      const upper = sorted[mid] ?? 0;
      const median = sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? upper) + upper) / 2;
      spike = value > SPIKE_FACTOR * median && value > 0;
    }
    if (value !== null && Number.isFinite(value)) {
      history.push(value);
      if (history.length > SPIKE_WINDOW) history.shift();
    }
    return spike;
  });
}

/**
 * The alerts table, newest first.
 * @param {readonly AlertView[]} alerts
 */
export function alertsTable(alerts) {
  if (alerts.length === 0) return h('p', { class: 'empty', 'data-alerts': 0 }, 'No collapse alerts for this run.');
  const rows = [...alerts].sort((a, b) => b.eventTimeMs - a.eventTimeMs);
  return h(
    'table',
    { class: 'alerts', 'data-alerts': rows.length },
    h('caption', {}, `${rows.length} collapse alert${rows.length === 1 ? '' : 's'} (dashed lines on the charts)`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Time', 'Severity', 'Kind', 'Learner step', 'Value / threshold', 'Message'].map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((alert) =>
        h(
          'tr',
          { class: `alert severity-${alert.severity}`, 'data-alert-id': alert.alertId },
          h('td', {}, fmtTime(alert.eventTimeMs)),
          h('td', {}, h('span', { class: `badge severity-${alert.severity}` }, alert.severity)),
          h('td', {}, alert.kind),
          h('td', {}, String(alert.learnerStep)),
          h('td', {}, `${fmt(alert.value)} / ${fmt(alert.threshold)}`),
          h('td', {}, alert.message, evidence(alert.evidence)),
        ),
      ),
    ),
  );
}

/** @param {AlertView['evidence']} map */
function evidence(map) {
  const entries = Object.entries(map);
  if (entries.length === 0) return null;
  return h('span', { class: 'evidence' }, ` (${entries.map(([k, v]) => `${k} ${fmt(v)}`).join(', ')})`);
}
