import type { LicenceClaims, PlatformConfig, Role } from '@agent-platform/contracts';
import type { DeepPartial } from '@agent-platform/api/testing';
import { createWorkflowService, type FaultPoints, type RunBus, type WorkflowService } from '@agent-platform/domain';
import type { Store } from '@agent-platform/store';
import { createPackageShelf, waitUntil, type PackageShelf } from '@agent-platform/testkit';
import { expect } from 'vitest';
import { startPlatformTestApi, type PlatformTestApi } from './platform-test-api.ts';
import { startStepModel, type StepModel } from './step-model.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- run bodies are read as JSON
export type RunBody = any;

const TERMINAL = ['Completed', 'Failed', 'Escalated'];

/** Installing workflows and running them over HTTP, for the workflow tests. */
export interface WorkflowHarness {
  /** Installs the workflow package (its agents_required from the shelf), activating its agents; returns the workflow id. */
  install(name: string, workflow: Record<string, unknown>, options?: { version?: string }): Promise<string>;
  /** POST /workflows/{id}/run, expecting 201 Running. */
  start(workflowId: string, input: string, headers?: Record<string, string>): Promise<RunBody>;
  /** GET /runs/{id} until `done(run)`. */
  waitFor(runId: string, done: (run: RunBody) => boolean, what?: string): Promise<RunBody>;
  /** Start, then wait for a terminal state. */
  runToEnd(workflowId: string, input: string): Promise<RunBody>;
}

export function workflowHarness(api: PlatformTestApi, shelf: PackageShelf, token: () => string): WorkflowHarness {
  const harness: WorkflowHarness = {
    async install(name, workflow, options = {}) {
      const dir = await shelf.workflow(name, workflow, options);
      const res = await api.request('POST', '/catalog/install', { token: token(), body: { path: dir, activate: true } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.installed.at(-1).id;
    },
    async start(workflowId, input, headers = {}) {
      const res = await api.request('POST', `/workflows/${workflowId}/run`, { token: token(), body: { input }, headers });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    },
    async waitFor(runId, done, what = 'the run') {
      let run: RunBody = null;
      await waitUntil(
        async () => {
          run = (await api.request('GET', `/runs/${runId}`, { token: token() })).body;
          return done(run);
        },
        { timeoutMs: 20_000, message: `${what} (${runId})` },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; last seen ${JSON.stringify(run)}`);
      });
      return run;
    },
    async runToEnd(workflowId, input) {
      const started = await harness.start(workflowId, input);
      expect(started.state).toBe('Running');
      return harness.waitFor(started.id, (run) => TERMINAL.includes(run.state), 'the run to end');
    },
  };
  return harness;
}

/** The step names and outputs of a run, for compact assertions. */
export function outputsOf(run: RunBody): Array<[string, string]> {
  return (run.step_results as Array<{ step_name: string; output: string }>).map((r) => [r.step_name, r.output]);
}

/** The all-in-one platform with the workflow tests' model stand-in, package shelf and key. */
export interface WorkflowPlatform {
  api: PlatformTestApi;
  model: StepModel;
  shelf: PackageShelf;
  /** An API key of `key.role` (auth mode `local`), or '' with auth disabled. */
  token: string;
  wf: WorkflowHarness;
  close(): Promise<void>;
}

export interface WorkflowPlatformOptions {
  /** Merged over the model stand-in's config. */
  config?: DeepPartial<PlatformConfig>;
  licence?: LicenceClaims;
  /** Agent-template packages written to the shelf (installed with the workflows that require them). */
  agents: readonly string[];
  /** With a key: auth mode `local` and a key of this role and name; without: auth disabled. */
  key?: { role: Role; name?: string };
  /** Wraps the platform's store (the store-operation guard: StoreOperationCounter.wrap). */
  decorateStore?: (store: Store) => Store;
}

export async function startWorkflowPlatform(options: WorkflowPlatformOptions): Promise<WorkflowPlatform> {
  const model = await startStepModel();
  const shelf = await createPackageShelf();
  const auth = options.key === undefined ? {} : { auth: { mode: 'local' as const } };
  const api = await startPlatformTestApi({
    config: { ...model.config, ...auth, ...options.config },
    ...(options.licence === undefined ? {} : { licence: options.licence }),
    ...(options.decorateStore === undefined ? {} : { decorateStore: options.decorateStore, listen: false }),
  });
  const token = options.key === undefined ? '' : await api.issueKey(options.key.role, options.key.name);
  for (const name of options.agents) await shelf.agent(name);
  return {
    api,
    model,
    shelf,
    token,
    wf: workflowHarness(api, shelf, () => token),
    close: async () => {
      await api.close();
      await model.close();
      await shelf.close();
    },
  };
}

const silentBus: RunBus = { dispatch: async () => undefined, changed: () => undefined, cancel: () => undefined };

/**
 * A workflow service over the platform's store whose step messages are never published, as a
 * starter that died after storing its run leaves them (the platform's sweeper must recover the
 * run); with `faults`, it stops where the fault-point test says.
 */
export function silentWorkflowService(api: PlatformTestApi, faults?: FaultPoints): WorkflowService {
  const d = api.deps;
  return createWorkflowService({
    store: d.store,
    clock: d.clock,
    agents: d.agents,
    licence: d.licence.gate,
    models: d.models,
    runBus: silentBus,
    settings: () => d.config.current().workflows,
    warn: () => undefined,
    ...(faults === undefined ? {} : { faults }),
  });
}
