import { ApiError, describeError } from '../lib/api.ts';
import { actionButton, fill, h } from '../lib/dom.ts';
import { formatTime } from '../lib/format.ts';
import { badge, dataTable, stateBadge } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, facts, pageHeader, refreshButton, section } from './common.ts';

/** spec §Compliance "Pack summary". */
interface PackSummary {
  id: string;
  name: string;
  version: string;
  jurisdiction: string;
  control_count: number;
}

/** spec §Compliance "Control". */
interface Control {
  control_id: string;
  requirement: string;
  platform_controls: string[];
  status: 'Satisfied' | 'Unsatisfied' | 'Unknown';
  evidence_description: string;
  evaluated_at: string | null;
}

/** spec §Compliance "Report". */
interface Report {
  framework_id: string;
  framework_name: string;
  framework_version: string;
  jurisdiction: string;
  generated_at: string;
  controls: Control[];
  satisfied_count: number;
  unsatisfied_count: number;
  unknown_count: number;
}

/**
 * spec §Endpoints "Compliance": the policy packs, a pack's report evaluated now (JSON, shown
 * here) and the same report as a PDF download. A platform without the compliance routes
 * answers 404, shown as "not available" rather than as an error.
 */
export const compliancePage: Page = {
  path: 'compliance',
  title: 'Compliance',
  needs: ['ComplianceRead'],
  async render(context) {
    const body = h('div');
    const report = h('div', { 'aria-live': 'polite' });
    const load = async (): Promise<void> => {
      try {
        const { packs } = await context.api.get<{ packs: PackSummary[] }>(
          '/compliance/packs',
          context.signal,
        );
        fill(body, packTable(context, packs, report));
      } catch (error) {
        fill(
          body,
          error instanceof ApiError && error.status === 404
            ? h(
                'p',
                { class: 'notice muted' },
                'Compliance reports are not available on this platform: it does not serve GET /compliance/packs.',
              )
            : errorBox(describeError(error)),
        );
      }
    };
    fill(
      context.root,
      pageHeader('Compliance', refreshButton('Refresh compliance packs', load)),
      h(
        'p',
        { class: 'lead' },
        'Policy packs evaluated against the audit log and the platform as it is now. Download a report as PDF for a regulator or an auditor.',
      ),
      section('Policy packs', body),
      report,
    );
    await load();
  },
};

function packTable(context: PageContext, packs: PackSummary[], reportBox: HTMLElement): HTMLElement {
  const view = (pack: PackSummary) => async (): Promise<void> => {
    fill(reportBox, h('p', { class: 'muted' }, `Evaluating ${pack.name}…`));
    try {
      const report = await context.api.get<Report>(
        `/compliance/packs/${encodeURIComponent(pack.id)}/report?format=json`,
        context.signal,
      );
      fill(reportBox, reportView(report));
    } catch (error) {
      fill(reportBox, errorBox(describeError(error)));
    }
  };
  const download = (pack: PackSummary) => async (): Promise<void> => {
    try {
      const response = await context.api.fetch(
        `/compliance/packs/${encodeURIComponent(pack.id)}/report?format=pdf`,
      );
      const name =
        /filename="?([^";]+)"?/.exec(response.headers.get('content-disposition') ?? '')?.[1] ??
        `compliance-report-${pack.id}.pdf`;
      const url = URL.createObjectURL(await response.blob());
      const link = h('a', { href: url, download: name, class: 'hidden' });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      context.announce(`${name} downloaded.`);
    } catch (error) {
      context.announce(`The report was not downloaded: ${describeError(error)}`, 'error');
    }
  };
  return dataTable<PackSummary>(
    `${packs.length} pack${packs.length === 1 ? '' : 's'}`,
    [
      {
        header: 'Pack',
        rowHeader: true,
        cell: (p) =>
          h('span', null, h('span', { class: 'name' }, p.name), h('span', { class: 'sub mono' }, p.id)),
      },
      { header: 'Version', cell: (p) => p.version },
      { header: 'Jurisdiction', cell: (p) => p.jurisdiction },
      { header: 'Controls', numeric: true, cell: (p) => p.control_count },
      {
        header: 'Report',
        cell: (p) =>
          h(
            'div',
            { class: 'button-row' },
            actionButton('View', `View the ${p.name} report`, view(p), 'primary'),
            actionButton('Download PDF', `Download the ${p.name} report as PDF`, download(p)),
          ),
      },
    ],
    packs,
    'No compliance pack is loaded.',
  );
}

function reportView(report: Report): HTMLElement {
  return section(
    `Report: ${report.framework_name}`,
    facts([
      ['Framework', `${report.framework_name} ${report.framework_version} (${report.framework_id})`],
      ['Jurisdiction', report.jurisdiction],
      ['Generated', formatTime(report.generated_at)],
      [
        'Controls',
        h(
          'span',
          { class: 'button-row' },
          badge(`${report.satisfied_count} satisfied`, 'ok'),
          badge(`${report.unsatisfied_count} unsatisfied`, report.unsatisfied_count > 0 ? 'bad' : 'neutral'),
          badge(`${report.unknown_count} unknown`, report.unknown_count > 0 ? 'warn' : 'neutral'),
        ),
      ],
    ]),
    dataTable<Control>(
      'Controls',
      [
        {
          header: 'Control',
          rowHeader: true,
          cell: (c) => h('span', { class: 'mono nowrap' }, c.control_id),
        },
        { header: 'Requirement', cell: (c) => c.requirement },
        { header: 'Status', cell: (c) => stateBadge(c.status) },
        { header: 'Evidence', cell: (c) => c.evidence_description },
        { header: 'Platform controls', cell: (c) => c.platform_controls.join(', ') },
      ],
      report.controls,
      'The pack has no controls.',
    ),
  );
}
