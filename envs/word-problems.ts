// Seeded arithmetic word problems for the ToolUse environment. Each needs two or three operations on
// two-digit numbers, so a calculator call is worth making; every answer is an integer.
import type { Rng } from '../core/rng.js';

export interface WordProblem {
  /** Which template made it. */
  readonly kind: string;
  readonly text: string;
  readonly answer: number;
  /** The numbers in the text, in order. */
  readonly numbers: readonly number[];
}

type Template = (rng: Rng) => WordProblem;

const TEMPLATES: readonly Template[] = [
  (rng) => {
    const trays = rng.intBetween(12, 48);
    const perTray = rng.intBetween(12, 36);
    const sold = rng.intBetween(10, trays * perTray - 1);
    return {
      kind: 'bakery',
      text: `A bakery bakes ${trays} trays of ${perTray} muffins each and sells ${sold} muffins. How many muffins are left?`,
      answer: trays * perTray - sold,
      numbers: [trays, perTray, sold],
    };
  },
  (rng) => {
    const speed = rng.intBetween(45, 95);
    const hours = rng.intBetween(3, 9);
    const extra = rng.intBetween(15, 120);
    return {
      kind: 'train',
      text: `A train travels at ${speed} km per hour for ${hours} hours, then another ${extra} km. How many km does it travel in total?`,
      answer: speed * hours + extra,
      numbers: [speed, hours, extra],
    };
  },
  (rng) => {
    const boxes = rng.intBetween(20, 60);
    const pens = rng.intBetween(12, 48);
    const sold = rng.intBetween(5, boxes - 1);
    return {
      kind: 'pens',
      text: `A store has ${boxes} boxes with ${pens} pens in each box. It sells ${sold} of the boxes. How many pens are left in the store?`,
      answer: (boxes - sold) * pens,
      numbers: [boxes, pens, sold],
    };
  },
  (rng) => {
    const adultPrice = rng.intBetween(12, 45);
    const childPrice = rng.intBetween(5, adultPrice - 1);
    const adults = rng.intBetween(3, 19);
    const children = rng.intBetween(3, 29);
    return {
      kind: 'tickets',
      text: `Museum tickets cost ${adultPrice} dollars for an adult and ${childPrice} dollars for a child. How many dollars does a group of ${adults} adults and ${children} children pay?`,
      answer: adultPrice * adults + childPrice * children,
      numbers: [adultPrice, childPrice, adults, children],
    };
  },
  (rng) => {
    const friends = rng.intBetween(3, 12);
    const each = rng.intBetween(15, 60);
    const total = friends * each;
    const givenAway = rng.intBetween(2, each - 1);
    return {
      kind: 'cards',
      text: `${total} cards are shared equally among ${friends} friends. Each friend then gives away ${givenAway} cards. How many cards does each friend have now?`,
      answer: each - givenAway,
      numbers: [total, friends, givenAway],
    };
  },
  (rng) => {
    const weekly = rng.intBetween(15, 85);
    const weeks = rng.intBetween(6, 20);
    const spent = rng.intBetween(10, weekly * weeks - 1);
    return {
      kind: 'savings',
      text: `Mia saves ${weekly} dollars every week for ${weeks} weeks, then spends ${spent} dollars on a bike. How many dollars does she have left?`,
      answer: weekly * weeks - spent,
      numbers: [weekly, weeks, spent],
    };
  },
];

export const WORD_PROBLEM_KINDS = ['bakery', 'train', 'pens', 'tickets', 'cards', 'savings'] as const;

export function generateWordProblem(rng: Rng): WordProblem {
  return rng.pick(TEMPLATES)(rng);
}
