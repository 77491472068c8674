import type { AuditEntryList, AuditEntryView, VerifyResponse } from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { actionButton, field, fill, h, select } from '../lib/dom.ts';
import { formatNumber, formatTime } from '../lib/format.ts';
import { badge, dataTable } from '../lib/table.ts';
import type { Page, PageContext } from '../app/page.ts';
import { errorBox, facts, notAllowed, pageHeader, section } from './common.ts';

/** Entries fetched per query (newest first) and shown per page. */
const FETCH_LIMIT = 500;
const PAGE_SIZE = 25;

/**
 * docs/audit.md: the trail (SecurityAudit: admin, auditor), filtered by category, actor and a
 * lower time bound, newest first; and the verification of the hash chain (SecurityRead).
 * GET /security/audit has no cursor, so the page fetches the newest FETCH_LIMIT matching
 * entries and pages through them here; narrower filters reach further back.
 */
export const auditPage: Page = {
  path: 'audit',
  title: 'Audit trail',
  needs: ['SecurityRead', 'SecurityAudit'],
  async render(context) {
    fill(
      context.root,
      pageHeader('Audit trail'),
      h(
        'p',
        { class: 'lead' },
        'Every change and refusal is recorded in a hash chain; verifying it recomputes every link.',
      ),
      context.session.can('SecurityRead') ? verifySection(context) : null,
      context.session.can('SecurityAudit')
        ? await trailSection(context)
        : section('Entries', notAllowed('Reading the audit trail', context.config.permissions.SecurityAudit)),
    );
  },
};

/**
 * Two walks (docs/audit.md "Verification"): the quick one re-hashes what was appended since the
 * last good walk; the full one re-hashes every entry from the first, which is what finds an
 * in-place edit of an older entry. The report says which one ran.
 */
function verifySection(context: PageContext): HTMLElement {
  const report = h('div', { 'aria-live': 'polite' });
  const verify = (full: boolean) => async (): Promise<void> => {
    fill(report, h('p', { class: 'muted' }, full ? 'Verifying every entry…' : 'Verifying…'));
    try {
      const result = await context.api.get<VerifyResponse>(
        `/security/verify${full ? '?full=true' : ''}`,
        context.signal,
      );
      fill(report, verifyReport(result));
    } catch (error) {
      fill(report, errorBox(describeError(error)));
    }
  };
  return section(
    'Chain verification',
    h(
      'div',
      { class: 'toolbar' },
      actionButton('Verify the audit chain', 'Verify the audit chain', verify(false), 'primary'),
      actionButton(
        'Verify every entry',
        'Verify every entry of the audit chain from the first',
        verify(true),
        'secondary',
      ),
    ),
    report,
  );
}

/** Which walk a report comes from, in words. */
function walkOf(result: { verified_from_seq: number; checked_entries: number; entry_count: number }): string {
  if (result.verified_from_seq === 1)
    return `Full verification: every entry re-hashed from the first (${formatNumber(result.checked_entries)} of ${formatNumber(result.entry_count)}).`;
  return `Quick verification: ${formatNumber(result.checked_entries)} entries re-hashed from entry ${formatNumber(result.verified_from_seq)}, the last one a previous walk found good; "Verify every entry" also finds an in-place edit of an older entry.`;
}

function verifyReport(result: VerifyResponse): HTMLElement {
  if (result.valid === null) return h('p', { class: 'notice muted' }, `Audit is disabled: ${result.reason}`);
  const checkpoint = result.checkpoint ?? null;
  return h(
    'div',
    { class: `verify ${result.valid ? 'ok' : 'bad'}` },
    h(
      'p',
      { class: 'verdict' },
      badge(result.valid ? 'valid' : 'invalid', result.valid ? 'ok' : 'bad'),
      result.valid
        ? ' The chain holds: every entry links to the one before it.'
        : ` The chain is broken: ${result.reason ?? result.first_invalid_reason ?? ''}`,
    ),
    h('p', { class: 'walk' }, walkOf(result)),
    facts([
      ['Entries', formatNumber(result.entry_count)],
      ['Checked now', `${formatNumber(result.checked_entries)} (from entry ${result.verified_from_seq})`],
      ['Tip hash', h('span', { class: 'mono wrap' }, result.tip_hash ?? '—')],
      ['First bad entry', result.first_invalid_seq === undefined ? '—' : String(result.first_invalid_seq)],
      [
        'Checkpoint',
        result.checkpoint_status === undefined
          ? '—'
          : `${result.checkpoint_status}${checkpoint === null ? '' : ` (entry ${checkpoint.tip_seq}, ${formatTime(checkpoint.at)}, signature ${checkpoint.signature_valid ? 'valid' : 'INVALID'})`}`,
      ],
      ['Covers', result.integrity_covers.join(', ')],
      ['Note', result.verification_note],
    ]),
  );
}

async function trailSection(context: PageContext): Promise<HTMLElement> {
  const category = select('category', [
    ['', 'Any category'],
    ...context.config.audit_categories.map((c) => [c, c] as const),
  ]);
  const actor = h('input', { type: 'text', name: 'actor', autocomplete: 'off' });
  const since = h('input', { type: 'date', name: 'since' });
  const results = h('div');
  let entries: AuditEntryView[] = [];
  let page = 0;

  const showPage = (): void => {
    const pages = Math.max(1, Math.ceil(entries.length / PAGE_SIZE));
    page = Math.min(page, pages - 1);
    const shown = entries.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE);
    const prev = h(
      'button',
      { type: 'button', class: 'button secondary', disabled: page === 0 },
      'Previous page',
    );
    const next = h(
      'button',
      { type: 'button', class: 'button secondary', disabled: page >= pages - 1 },
      'Next page',
    );
    prev.addEventListener('click', () => {
      page -= 1;
      showPage();
      results.querySelector<HTMLButtonElement>('.pager button:not([disabled])')?.focus();
    });
    next.addEventListener('click', () => {
      page += 1;
      showPage();
      results.querySelector<HTMLButtonElement>('.pager button:not([disabled])')?.focus();
    });
    fill(
      results,
      entryTable(shown, entries.length),
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Audit pages' },
        prev,
        h('span', { 'aria-live': 'polite' }, `Page ${page + 1} of ${pages}`),
        next,
      ),
    );
  };

  const load = async (): Promise<void> => {
    const query = new URLSearchParams({ limit: String(FETCH_LIMIT) });
    if (category.value !== '') query.set('category', category.value);
    if (actor.value.trim() !== '') query.set('actor', actor.value.trim());
    if (since.value !== '') query.set('since', since.value);
    try {
      entries = (await context.api.get<AuditEntryList>(`/security/audit?${query}`, context.signal)).entries;
      page = 0;
      showPage();
    } catch (error) {
      fill(results, errorBox(describeError(error)));
    }
  };

  const form = h(
    'form',
    { class: 'toolbar filters', 'aria-label': 'Filter the audit trail' },
    field('Category', category),
    field('Actor (identity)', actor),
    field('Since (UTC date)', since),
    h('button', { type: 'submit', class: 'button primary' }, 'Apply filters'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load().then(() => context.announce(`${entries.length} audit entries found.`));
  });
  await load();
  return section('Entries', form, results);
}

function entryTable(entries: AuditEntryView[], total: number): HTMLElement {
  return dataTable<AuditEntryView>(
    `${total === FETCH_LIMIT ? `The newest ${FETCH_LIMIT}` : formatNumber(total)} matching entr${total === 1 ? 'y' : 'ies'}, newest first`,
    [
      { header: 'Seq', numeric: true, rowHeader: true, cell: (e) => e.seq },
      { header: 'Time', cell: (e) => formatTime(e.timestamp) },
      { header: 'Category', cell: (e) => e.category },
      { header: 'Identity', cell: (e) => h('span', null, e.identity, h('span', { class: 'sub' }, e.role)) },
      { header: 'Action', cell: (e) => h('span', { class: 'mono' }, e.action) },
      { header: 'Target', cell: (e) => h('span', { class: 'mono clip' }, e.target) },
      { header: 'Result', cell: (e) => e.result },
    ],
    entries,
    'No entry matches.',
  );
}
