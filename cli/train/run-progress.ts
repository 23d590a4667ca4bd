// What `trajflow train` reads from its parts' lines and what it prints about the run (pure): the learner's updates
// and newest version and the evaluator's newest, best and first better-than-random held-out results (the progress
// line's detail), the last iteration the actors started (recorded so that a rerun resumes after it), and the closing lines.

import { type HeldOut, parseEvaluationLine } from '../../learner/eval/evaluation-event.js';

export type { HeldOut } from '../../learner/eval/evaluation-event.js';

// The learner's own line (learner/command.ts); the evaluator's is parsed beside where it is written.
const LEARNER_UPDATE = /update (\d+) → v(\d+)/;
const ACTORS_ITERATION = /iteration (\d+)/;

export class RunProgress {
  /** Updates done (they count from 0 in the learner's lines). */
  updates = 0;
  lastEval: HeldOut | undefined;
  /** The evaluation with the highest held-out success so far (the earliest of equals). */
  bestEval: HeldOut | undefined;
  /** The first evaluation whose held-out success exceeded the random policy's. */
  beatRandom: HeldOut | undefined;
  /** The last iteration any actors process of the run started (-1: none). */
  lastIteration: number;
  private policy = '';
  private heldOut = '';

  /** `firstIteration`: where the actors start (after the iterations a previous run started). */
  constructor(firstIteration: number) {
    this.lastIteration = firstIteration - 1;
  }

  /** A part's line: 'progress' when the progress line moves, 'iteration' when the actors started a later iteration (to record). */
  read(part: string, line: string): 'progress' | 'iteration' | null {
    if (part === 'learner') return this.learnerLine(line) ? 'progress' : null;
    if (part === 'evaluator') return this.evaluatorLine(line) ? 'progress' : null;
    if (part === 'actors') return this.actorsLine(line) ? 'iteration' : null;
    return null;
  }

  /** A learner line: true when it reported an update (the progress line moves). */
  learnerLine(line: string): boolean {
    const match = LEARNER_UPDATE.exec(line);
    if (!match) return false;
    this.updates = Number(match[1]) + 1;
    this.policy = `policy v${match[2]}`;
    return true;
  }

  /** An evaluator line: true when it reported an evaluation. */
  evaluatorLine(line: string): boolean {
    if (!line.startsWith('evaluator: ')) return false;
    const evaluation = parseEvaluationLine(line);
    if (!evaluation) return false;
    this.lastEval = evaluation;
    if (!this.bestEval || evaluation.success > this.bestEval.success) this.bestEval = evaluation;
    if (!this.beatRandom && evaluation.success > evaluation.random) this.beatRandom = evaluation;
    this.heldOut = `held-out ${evaluation.success.toFixed(3)} at v${evaluation.version} (random ${evaluation.random.toFixed(3)})`;
    return true;
  }

  /** An actors line: true when it names an iteration past the last one started (to record). */
  actorsLine(line: string): boolean {
    const match = ACTORS_ITERATION.exec(line);
    if (!match || Number(match[1]) <= this.lastIteration) return false;
    this.lastIteration = Number(match[1]);
    return true;
  }

  /** The progress line's detail: the newest policy version, the newest held-out evaluation, the best one and when the policy first beat random. */
  detail(): string {
    const newest = [this.policy, this.heldOut].filter(Boolean).join(', ');
    return [newest, this.bestText(), this.beatRandomText()].filter(Boolean).join(' · ');
  }

  /** `best 0.62 at v140` (empty before the first evaluation). */
  private bestText(): string {
    const best = this.bestEval;
    return best ? `best ${best.success.toFixed(2)} at v${best.version}` : '';
  }

  /** `beat random (0.29) at v60, 21,400 env steps` (empty until it happened). */
  private beatRandomText(): string {
    const beat = this.beatRandom;
    if (!beat) return '';
    const steps = beat.envSteps >= 0 ? `, ${beat.envSteps.toLocaleString('en-US')} env steps` : '';
    return `beat random (${beat.random.toFixed(2)}) at v${beat.version}${steps}`;
  }

  stoppedLine(runId: string): string {
    return `trajflow train: stopped run ${runId} (actors reached iteration ${this.lastIteration})`;
  }

  /** The run's result, when it was evaluated: held-out success beside the random policy's, at which version, env steps and time. */
  summaryLine(runId: string, elapsedMs: number): string | undefined {
    const e = this.lastEval;
    if (!e) return undefined;
    const steps = e.envSteps >= 0 ? `, ${e.envSteps} env steps` : '';
    return `trajflow train: run ${runId} — held-out success ${e.success.toFixed(3)} (random policy ${e.random.toFixed(3)}) at v${e.version}${steps}, ${(elapsedMs / 1000).toFixed(0)} s`;
  }
}
