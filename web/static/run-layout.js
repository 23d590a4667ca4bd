// @ts-check
// The run page's skeleton: breadcrumbs, heading, live status, and its four sections (learning curves, held-out
// evaluation, collapse early warnings, trajectories) with an empty slot per chart and the boxes the tables go in.
import { h } from './dom.js';
/** @import { Child } from './page-types.js' */

/**
 * The elements the page fills in later, and the nodes to append to its root, in order.
 * @typedef {object} RunLayout
 * @property {HTMLElement[]} nodes
 * @property {HTMLHeadingElement} heading
 * @property {HTMLParagraphElement} liveStatus
 * @property {HTMLParagraphElement} curveNote
 * @property {Map<string, HTMLDivElement>} slots one per chart id, so the charts keep their order whichever data arrives first
 * @property {HTMLDivElement} passTable
 * @property {HTMLParagraphElement} evaluationNote
 * @property {HTMLDivElement} alertsBox
 * @property {HTMLDivElement} trajectoriesBox
 */

/**
 * A grid with one empty slot per chart id, each recorded in `slots`.
 * @param {Map<string, HTMLDivElement>} slots
 * @param {string[]} ids
 */
function chartGrid(slots, ids) {
  return h(
    'div',
    { class: 'charts' },
    ids.map((id) => {
      const slot = h('div', { class: 'slot' });
      slots.set(id, slot);
      return slot;
    }),
  );
}

/**
 * A section headed by an h2 that labels it.
 * @param {string} id the heading's id
 * @param {string} title
 * @param {...Child} children
 */
const section = (id, title, ...children) => h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...children);

/**
 * @param {string} runId
 * @returns {RunLayout}
 */
export function runLayout(runId) {
  /** @type {Map<string, HTMLDivElement>} */
  const slots = new Map();
  const heading = h('h1', { tabindex: -1 }, 'Run ', h('code', {}, runId));
  const liveStatus = h('p', { class: 'live', role: 'status', 'data-live': 'off' }, 'Live updates: starting…');
  const curveNote = h('p', { class: 'hint' });
  const curveGrid = chartGrid(slots, ['reward', 'success', 'pass', 'closed']);
  const passTable = h('div', { class: 'pass-table' });
  const evaluationGrid = chartGrid(slots, ['held-out']);
  const evaluationNote = h('p', { class: 'empty', 'data-evaluations': 0 }, 'Loading…');
  const collapseGrid = chartGrid(slots, ['in-group-std', 'entropy', 'template', 'grad-norm', 'length', 'importance', 'staleness']);
  const alertsBox = h('div', { class: 'alerts-box' });
  const trajectoriesBox = h('div', {}, h('p', {}, 'Loading…'));
  const nodes = [
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Runs'), ' › ', runId),
    heading,
    liveStatus,
    section('curves-h', 'Learning curves', curveNote, curveGrid, passTable),
    section('evaluation-h', 'Held-out evaluation', evaluationNote, evaluationGrid),
    section(
      'collapse-h',
      'Collapse early warnings',
      h('p', { class: 'hint' }, 'The Echo Trap shows first as in-group reward std falling, then entropy dropping, then gradient-norm spikes. Dashed lines mark alerts.'),
      collapseGrid,
      h('h3', {}, 'Alerts'),
      alertsBox,
    ),
    section('trajectories-h', 'Trajectories', trajectoriesBox),
  ];
  return { nodes, heading, liveStatus, curveNote, slots, passTable, evaluationNote, alertsBox, trajectoriesBox };
}
