import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** deploy/monitoring: the example Prometheus config, alert rules and Grafana dashboard. */
export const MONITORING = fileURLToPath(new URL('../../deploy/monitoring/', import.meta.url));

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid: string };
  targets?: Array<{ expr: string; refId: string }>;
}

export function dashboardPanels(): DashboardPanel[] {
  return (
    JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as {
      panels: DashboardPanel[];
    }
  ).panels;
}

/** Every PromQL expression of the dashboard's panels and of the alert rules. */
export function monitoringExpressions(): Array<{ where: string; expr: string }> {
  const rules = parse(readFileSync(join(MONITORING, 'alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  return [
    ...dashboardPanels().flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })),
    ),
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
  ];
}
