import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { requireBinary } from '@agent-platform/testkit';
import { describe, expect, it } from 'vitest';
import { dashboardPanels, MONITORING } from '../support/monitoring.ts';
import { promtoolCheckRules } from '../support/promtool.ts';

// deploy/monitoring (docs/observability.md "Dashboard and alerts"): the Prometheus config and alert
// rules pass promtool, the rules' unit tests fire the alerts they should, and the Grafana
// dashboard is well formed. That every metric they query exists is checked against a live
// /metrics in tests/e2e/metrics.test.ts.
const promtool = requireBinary('promtool');

describe.skipIf(promtool === null)('deploy/monitoring with promtool', () => {
  it('has a Prometheus config and alert rules promtool accepts', () => {
    const run = spawnSync(promtool!, ['check', 'config', 'prometheus.yml'], {
      cwd: MONITORING,
      encoding: 'utf8',
    });
    expect(`${run.stdout}${run.stderr}`, 'promtool check config').toContain('SUCCESS: 1 rule files found');
    expect(run.status).toBe(0);
    expect(promtoolCheckRules(promtool!, [join(MONITORING, 'alerts.yml')])).toBe('');
  });

  it('fires its alerts on the series that should fire them (promtool test rules)', () => {
    const run = spawnSync(promtool!, ['test', 'rules', 'alerts.test.yml'], {
      cwd: MONITORING,
      encoding: 'utf8',
    });
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS');
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  });
});

describe('the Grafana dashboard', () => {
  it('is one dashboard of panels with unique ids, each querying through the data source variable, inside the 24-column grid', () => {
    const panels = dashboardPanels();
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    const graphs = panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThan(20);
    for (const panel of graphs) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      // Every query follows the dashboard's process selector.
      for (const target of panel.targets ?? []) expect(target.expr, panel.title).toContain('job=~"$job"');
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
    }
    // No two panels on the same cells.
    const cells = new Set<string>();
    for (const { gridPos: g, title } of panels) {
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
    }
  });
});
