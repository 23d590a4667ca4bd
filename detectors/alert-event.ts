// A raised alert as a CollapseAlertEvent. Everything in it comes from the inputs — the id from run, kind
// and anchor, the time from the input's event time — so processing the same events again (a restart,
// a rebalance, a replay) produces the same events, and ClickHouse collapses the copies by (run_id, alert_id).
import { createHash } from 'node:crypto';
import type { CollapseAlertEvent } from '../schemas/index.js';
import type { Attribution, RaisedAlert } from './engine.js';

/** `<kind>-<24 hex>`: a hash of run id, kind and anchor ('step:<learner step>', 'batch:<batchId>', 'window:<n>'). */
export function alertIdOf(runId: string, kind: string, anchor: string): string {
  return `${kind}-${createHash('sha256').update(`${runId}\n${kind}\n${anchor}`).digest('hex').slice(0, 24)}`;
}

export function alertEvent(raised: RaisedAlert, attribution: Attribution): CollapseAlertEvent {
  const { alert, runId } = raised;
  const evidence: Record<string, number> = {};
  for (const key of Object.keys(alert.evidence).sort()) evidence[key] = alert.evidence[key]!;
  return {
    alertId: alertIdOf(runId, alert.kind, raised.anchor),
    runId,
    kind: alert.kind,
    severity: alert.severity,
    learnerStep: attribution.learnerStep,
    policyVersion: attribution.policyVersion,
    value: alert.value,
    threshold: alert.threshold,
    message: alert.message,
    evidence,
    eventTimeMs: raised.eventTimeMs,
  };
}
