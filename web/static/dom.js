// @ts-check
// Small DOM helpers. Everything shown is set as text (never as HTML), so event text from environments
// cannot inject markup.

/** @import { Attrs, Child } from './page-types.js' */

/**
 * Creates an element: h('a', { href: '#/', class: 'x', 'data-k': 1, onclick: fn }, 'text', child, [more]).
 * Null, undefined and false children are skipped; strings and numbers become text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = String(value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {HTMLElement} el
 * @param {readonly Child[]} children
 */
function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/**
 * A number for display: '–' when missing, fixed digits below 1000, grouped above.
 * @param {number | null | undefined} value
 * @returns {string}
 */
export function fmt(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) >= 1000) return value.toLocaleString('en');
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en');
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

/**
 * A percentage of a 0..1 rate.
 * @param {number | null | undefined} rate
 */
export function pct(rate) {
  return rate === null || rate === undefined ? '–' : `${(100 * rate).toFixed(1)} %`;
}

/**
 * Local date and time of an epoch-ms time, to the second.
 * @param {number | null | undefined} ms
 */
export function fmtTime(ms) {
  if (ms === null || ms === undefined) return '–';
  const d = new Date(ms);
  const two = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/**
 * A table with a caption, header cells and rows of cells (a cell is text or a node).
 * @param {string} caption
 * @param {readonly string[]} headers
 * @param {ReadonlyArray<readonly Child[]>} rows
 * @param {Attrs} [attrs]
 */
export function table(caption, headers, rows, attrs = {}) {
  return h(
    'table',
    attrs,
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((cells) =>
        h(
          'tr',
          {},
          cells.map((cell) => h('td', {}, cell)),
        ),
      ),
    ),
  );
}

/**
 * A <dl> of [term, value] pairs.
 * @param {ReadonlyArray<readonly [string, Child]>} pairs
 * @param {Attrs} [attrs]
 */
export function facts(pairs, attrs = {}) {
  return h(
    'dl',
    { class: 'facts', ...attrs },
    pairs.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

/**
 * Calls `resize` once the window has kept its size for 150 ms; the function returned stops listening.
 * @param {() => void} resize
 */
export function onWindowResize(resize) {
  /** @type {number | undefined} */
  let timer;
  const onResize = () => {
    clearTimeout(timer);
    timer = setTimeout(resize, 150);
  };
  window.addEventListener('resize', onResize);
  return () => {
    clearTimeout(timer);
    window.removeEventListener('resize', onResize);
  };
}
