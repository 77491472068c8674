import { describe, expect, it } from 'vitest';
import { fleetStatus, fleetTools } from './fleet-status.ts';
import type {
  IntegrationDesiredRecord,
  IntegrationHostRecord,
  IntegrationNodeRecord,
} from './integration-state.ts';

const mcp = { transport: 'mcp' as const };
const desired = (state: 'connected' | 'disconnected', generation = 2): IntegrationDesiredRecord => ({
  id: 'x',
  desired: state,
  generation,
  changed_at: '',
});
const host = (id: string): IntegrationHostRecord => ({
  id,
  process: 'agent-worker',
  started_at: '',
  reported_at: '',
  expires_at: '',
});
const row = (
  node: string,
  status: IntegrationNodeRecord['status'],
  generation = 2,
): IntegrationNodeRecord => ({
  id: `x@${node}`,
  integration_id: 'x',
  node_id: node,
  generation,
  status,
  tools: status === 'Running' ? [{ name: 'echo', description: '', input_schema: {}, read_only: true }] : [],
  reported_at: '',
  expires_at: '',
});

describe('the fleet status of an integration (docs/integrations.md "Status")', () => {
  it('is Disabled for a SOAP adapter, Installed before any connect, Disconnected after a disconnect', () => {
    expect(fleetStatus({ transport: 'soap' }, desired('connected'), [host('a')], [row('a', 'Running')])).toBe(
      'Disabled',
    );
    expect(fleetStatus(mcp, null, [host('a')], [])).toBe('Installed');
    expect(fleetStatus(mcp, desired('disconnected'), [host('a')], [row('a', 'Running')])).toBe(
      'Disconnected',
    );
  });

  it('is Running when every live worker runs the current generation', () => {
    expect(
      fleetStatus(
        mcp,
        desired('connected'),
        [host('a'), host('b')],
        [row('a', 'Running'), row('b', 'Running')],
      ),
    ).toBe('Running');
  });

  it('ignores rows of gone workers and of older generations', () => {
    expect(
      fleetStatus(
        mcp,
        desired('connected'),
        [host('a')],
        [row('a', 'Running'), row('gone', { Error: 'boom' })],
      ),
    ).toBe('Running');
    expect(fleetStatus(mcp, desired('connected'), [host('a')], [row('a', 'Running', 1)])).toEqual({
      Error: 'connecting: running on 0 of 1 agent workers',
    });
  });

  it('names the failure: the message alone with one worker, "k of n" with several', () => {
    expect(fleetStatus(mcp, desired('connected'), [host('a')], [row('a', { Error: 'exited' })])).toEqual({
      Error: 'exited',
    });
    expect(
      fleetStatus(
        mcp,
        desired('connected'),
        [host('a'), host('b')],
        [row('a', 'Running'), row('b', { Error: 'exited' })],
      ),
    ).toEqual({
      Error: '1 of 2 agent workers: exited',
    });
  });

  it('says when no worker is alive, and when some have not reported yet', () => {
    expect(fleetStatus(mcp, desired('connected'), [], [])).toEqual({
      Error: expect.stringContaining('no agent worker is running'),
    });
    expect(fleetStatus(mcp, desired('connected'), [host('a'), host('b')], [row('a', 'Running')])).toEqual({
      Error: 'connecting: running on 1 of 2 agent workers',
    });
  });

  it('takes the tool list from a Running worker of the current generation', () => {
    expect(fleetTools(desired('connected'), [host('a')], [row('a', 'Running')])?.map((t) => t.name)).toEqual([
      'echo',
    ]);
    expect(fleetTools(desired('connected'), [host('a')], [row('a', 'Running', 1)])).toBeNull();
    expect(fleetTools(desired('disconnected'), [host('a')], [row('a', 'Running')])).toBeNull();
  });
});
