import type { AdmissionState } from '@agent-platform/contracts';
import type { Collection, Store } from '@agent-platform/store';
import { workflowRuns } from './run-record.ts';

/**
 * Admission of new runs per workflow definition version (spec §States "Workflow admission
 * state"; docs/workflows.md "Admission"): `active` after install; an upgrade or an uninstall
 * turns the replaced version `draining` (new runs of it are refused with 403, runs in flight
 * finish on the definition they started with), and `suspended` once none is in flight.
 */
export interface WorkflowAdmissionRecord {
  /** `<workflow id>@<version>`. */
  id: string;
  workflow_id: string;
  version: string;
  state: AdmissionState;
  updated_at: string;
}

export const WORKFLOW_ADMISSIONS_COLLECTION = 'workflow_admissions';

export function workflowAdmissions(store: Store): Collection<WorkflowAdmissionRecord> {
  return store.collection<WorkflowAdmissionRecord>(WORKFLOW_ADMISSIONS_COLLECTION, { indexes: [{ field: 'workflow_id' }, { field: 'state' }] });
}

export const admissionId = (workflowId: string, version: string): string => `${workflowId}@${version}`;

/** The admission of one version; null when no record exists (installed before admissions did). */
export async function admissionOf(store: Store, workflowId: string, version: string): Promise<AdmissionState | null> {
  return (await workflowAdmissions(store).get(admissionId(workflowId, version)))?.doc.state ?? null;
}

/** Runs of that version not yet in a terminal state. */
export async function runsInFlight(store: Store, workflowId: string, version: string): Promise<number> {
  const runs = workflowRuns(store);
  let count = 0;
  for (const state of ['Pending', 'Running', 'Suspended'] as const) {
    const rows = await runs.find({ where: { workflow_id: workflowId, state } });
    count += rows.filter((r) => r.doc.definition.version === version).length;
  }
  return count;
}

/** Sets one version's admission, returning how to put the previous record back (install rollback). */
export async function setAdmission(store: Store, workflowId: string, version: string, state: AdmissionState, now: string): Promise<() => Promise<void>> {
  const admissions = workflowAdmissions(store);
  const id = admissionId(workflowId, version);
  const previous = (await admissions.get(id))?.doc ?? null;
  await admissions.upsert({ id, workflow_id: workflowId, version, state, updated_at: now });
  return async () => {
    if (previous === null) await admissions.delete(id);
    else await admissions.upsert(previous);
  };
}

/** Stops admitting runs of `version`: `draining` while runs of it are in flight, else `suspended`. */
export async function drainAdmission(store: Store, workflowId: string, version: string, now: string): Promise<() => Promise<void>> {
  const state: AdmissionState = (await runsInFlight(store, workflowId, version)) > 0 ? 'draining' : 'suspended';
  return setAdmission(store, workflowId, version, state, now);
}

/**
 * A draining version with nothing left in flight becomes `suspended`. Called when a run of it ends
 * and by the sweeper (so a crash between a run's end and this call only delays it).
 */
export async function settleDrain(store: Store, workflowId: string, version: string, now: string): Promise<void> {
  const admissions = workflowAdmissions(store);
  const id = admissionId(workflowId, version);
  if ((await admissions.get(id))?.doc.state !== 'draining') return;
  if ((await runsInFlight(store, workflowId, version)) > 0) return;
  await admissions.update(id, (current) => (current?.doc.state === 'draining' ? { ...current.doc, state: 'suspended', updated_at: now } : null));
}

/** Every version still draining (for the sweeper). */
export async function drainingAdmissions(store: Store): Promise<WorkflowAdmissionRecord[]> {
  return (await workflowAdmissions(store).find({ where: { state: 'draining' } })).map((r) => r.doc);
}
