import type { JournaledToolCall, RunToolCall, WorkflowRunStatus } from '@agent-platform/contracts';
import { fill, h } from '../lib/dom.ts';
import { formatNumber, formatTime, words } from '../lib/format.ts';
import { badge, dataTable } from '../lib/table.ts';
import type { PageContext } from '../app/page.ts';
import { section } from './common.ts';

/**
 * The run's tool-call journal (docs/tools.md "The tool-call journal"): every state-changing call of
 * its steps with the idempotency key the system of record saw, and, once the run is Escalated, the
 * calls in doubt that a person must look up there by key. Kept live by `tool_call` events and
 * replaced by each `run`/`end` snapshot.
 */
export interface ToolCallsView {
  /** The escalation notice; empty unless the run is Escalated. */
  readonly escalation: HTMLElement;
  /** The "Tool calls" section; empty while the run has no journaled call. */
  readonly journal: HTMLElement;
  /** The run as stored (a `run` or `end` snapshot): replaces every call shown. */
  show(run: WorkflowRunStatus): void;
  /** A journal entry appeared or changed (a `tool_call` event); returns the line to read out. */
  update(call: RunToolCall): string;
}

/** How the stream names a journal entry: the step execution and the call's place in it. */
const idOf = (call: RunToolCall): string => `${call.step_key}/${call.position}`;

export function createToolCallsView(context: PageContext): ToolCallsView {
  const calls = new Map<string, RunToolCall>();
  const escalation = h('div');
  const journal = h('div');
  /** What the escalation notice shows now: redrawn only when that changes (it holds buttons). */
  let escalationShown = '';

  const renderJournal = (): void => {
    // Oldest first, as the run document keeps them; a stable sort keeps the stream's order on ties.
    const rows = [...calls.values()].sort((a, b) => a.at.localeCompare(b.at));
    fill(journal, rows.length === 0 ? null : journalSection(rows));
  };

  const renderEscalation = (run: WorkflowRunStatus): void => {
    // An Escalated run written before runs carried `escalation` still names its calls in doubt
    // through the journal: the ones whose outcome is unknown.
    const inDoubt =
      run.escalation?.calls ?? (run.tool_calls ?? []).filter((call) => call.state === 'unknown');
    const shown = run.state === 'Escalated' ? JSON.stringify([run.escalation?.step, inDoubt]) : '';
    if (shown === escalationShown) return;
    escalationShown = shown;
    fill(escalation, shown === '' ? null : escalationNotice(context, run, inDoubt));
  };

  return {
    escalation,
    journal,
    show(run) {
      calls.clear();
      for (const call of run.tool_calls ?? []) calls.set(idOf(call), call);
      renderJournal();
      renderEscalation(run);
    },
    update(call) {
      const before = calls.get(idOf(call));
      calls.set(idOf(call), call);
      renderJournal();
      return liveLine(call, before);
    },
  };
}

function journalSection(rows: readonly RunToolCall[]): HTMLElement {
  return section(
    'Tool calls',
    h(
      'p',
      { class: 'lead' },
      'Every call that changes something in a system of record, journaled before it is sent. The system sees each with its idempotency key; a step run again is given the recorded answer (a replay) instead of calling again.',
    ),
    h(
      'div',
      null,
      dataTable<RunToolCall>(
        `${rows.length} state-changing tool call${rows.length === 1 ? '' : 's'}, oldest first`,
        [
          { header: 'Step', cell: (c) => c.step },
          {
            header: 'Tool',
            cell: (c) => [
              h('span', { class: 'name' }, c.tool),
              c.native_tool === c.tool ? null : h('span', { class: 'sub' }, `calls ${c.native_tool}`),
            ],
          },
          {
            header: 'Provider',
            cell: (c) => [
              h('span', { class: 'nowrap' }, c.provider_id),
              c.idempotent_keys ? h('span', { class: 'sub' }, 'honours idempotency keys') : null,
            ],
          },
          { header: 'State', cell: (c) => stateCell(c) },
          {
            header: 'Idempotency key',
            rowHeader: true,
            cell: (c) => h('code', { class: 'key' }, c.idempotency_key),
          },
          {
            header: 'Answered',
            cell: (c) => [
              c.answered_at === undefined ? '—' : formatTime(c.answered_at),
              h('span', { class: 'sub' }, `sent ${formatTime(c.at)}`),
            ],
          },
          { header: 'Replays', numeric: true, cell: (c) => formatNumber(c.replays) },
        ],
        rows,
        'No tool call yet.',
      ),
    ),
  );
}

const STATE_TONE = { started: 'info', answered: 'ok', unknown: 'bad', not_sent: 'neutral' } as const;

/** The state word as the api spells it; an answer that was an error says so in words too. */
function stateCell(call: JournaledToolCall): HTMLElement[] {
  const tone = call.state === 'answered' && call.is_error === true ? 'warn' : STATE_TONE[call.state];
  return [
    badge(words(call.state), tone),
    ...(call.state === 'answered' && call.is_error === true
      ? [h('span', { class: 'sub' }, 'the system answered with an error')]
      : []),
  ];
}

/**
 * An Escalated run (docs/tools.md "The tool-call journal"): the step is not executed again,
 * because its calls may or may not have taken effect; only the system of record knows, and it
 * knows them by idempotency key.
 */
function escalationNotice(
  context: PageContext,
  run: WorkflowRunStatus,
  inDoubt: readonly JournaledToolCall[],
): HTMLElement {
  const step = run.escalation?.step;
  const many = inDoubt.length !== 1;
  const notice = section(
    'Escalated: a person must check the system of record',
    inDoubt.length === 0
      ? h('p', null, run.error ?? 'The run was handed to a person.')
      : [
          h(
            'p',
            null,
            `${step === undefined ? 'A step' : `Step '${step}'`} stopped with ${many ? `${inDoubt.length} calls` : 'a call'} in doubt: ${many ? 'they' : 'it'} may or may not have taken effect, and the platform will not send ${many ? 'them' : 'it'} again. `,
            h('strong', null, `Look ${many ? 'these keys' : 'this key'} up in the system of record`),
            ` to learn whether ${many ? 'each call' : 'the call'} took effect there.`,
          ),
          h(
            'ul',
            { class: 'calls-in-doubt' },
            ...inDoubt.map((call) =>
              callInDoubt(context, call, inDoubt.filter((c) => c.tool === call.tool).length > 1),
            ),
          ),
        ],
  );
  notice.classList.add('escalation');
  return notice;
}

function callInDoubt(context: PageContext, call: JournaledToolCall, sameToolTwice: boolean): HTMLElement {
  const key = h('code', { class: 'key' }, call.idempotency_key);
  const copy = h(
    'button',
    {
      type: 'button',
      class: 'button secondary small',
      'aria-label': `Copy the key of ${call.tool}${sameToolTwice ? ` call ${call.position + 1}` : ''}`,
    },
    'Copy key',
  );
  copy.addEventListener('click', () => void copyKey(context, key, call.idempotency_key));
  return h(
    'li',
    null,
    h('span', { class: 'name' }, call.tool),
    h(
      'span',
      { class: 'sub' },
      `${call.provider_id}${call.native_tool === call.tool ? '' : ` (${call.native_tool})`} · sent ${formatTime(call.at)} by worker ${call.worker} · `,
      badge(words(call.state), STATE_TONE[call.state]),
    ),
    h('div', { class: 'key-row' }, h('span', { class: 'muted' }, 'Key'), key, copy),
  );
}

/** The clipboard needs a secure page (https or loopback); elsewhere the key is selected for Ctrl+C. */
async function copyKey(context: PageContext, code: HTMLElement, key: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(key);
    context.announce(`Key ${key} copied.`);
  } catch {
    getSelection()?.selectAllChildren(code);
    context.announce('The key is selected: copy it with Ctrl+C (⌘C on a Mac).');
  }
}

/** What changed about a call, for the page's status line. */
function liveLine(call: RunToolCall, before: RunToolCall | undefined): string {
  if (before !== undefined && before.state === call.state && call.replays > before.replays)
    return `Live: ${call.tool} of step ${call.step} was given its recorded answer again instead of being called.`;
  switch (call.state) {
    case 'started':
      return `Live: ${call.tool} of step ${call.step} sent with key ${call.idempotency_key}.`;
    case 'answered':
      return `Live: ${call.tool} of step ${call.step} answered${call.is_error === true ? ' with an error' : ''}.`;
    case 'unknown':
      return `Live: ${call.tool} of step ${call.step} was cut off; its outcome is unknown (key ${call.idempotency_key}).`;
    case 'not_sent':
      return `Live: ${call.tool} of step ${call.step} was not sent.`;
  }
}
