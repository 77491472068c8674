import type {
  AuditCheckpointList,
  ChannelDetail,
  IntegrationList,
  LicenceStatus,
  RunList,
  VerifyResponse,
} from '@agent-platform/contracts';
import { describeError } from '../lib/api.ts';
import { h } from '../lib/dom.ts';
import { formatNumber, formatTime } from '../lib/format.ts';
import type { PageContext } from '../app/page.ts';
import { webhookHealth } from './webhooks.ts';

/** One thing a person should look at, and the page where they can. */
export interface Alarm {
  text: string;
  href: string;
}

const DAY_MS = 24 * 3_600_000;
/** A transaction budget this used (or more) is near its limit. */
const NEAR_LIMIT = 0.8;
/** The newest audit checkpoint older than this is stale (checkpoints are written every few minutes). */
const STALE_CHECKPOINT_MS = DAY_MS;

type Check = (context: PageContext, now: number) => Promise<Alarm[]>;

const channelsInError: Check = async ({ api, signal }) => {
  const { channels } = await api.get<{ channels: ChannelDetail[] }>('/channels', signal);
  return channels.flatMap((c) =>
    typeof c.status === 'object'
      ? [{ text: `Channel ${c.id} is in Error: ${c.status.Error}`, href: '/dashboard/channels' }]
      : [],
  );
};

const integrationsDown: Check = async ({ api, signal }) => {
  const { integrations } = await api.get<IntegrationList>('/integrations', signal);
  return integrations.flatMap((i) =>
    typeof i.status === 'object'
      ? [{ text: `Integration ${i.id} is in Error: ${i.status.Error}`, href: '/dashboard/integrations' }]
      : i.status === 'Disconnected'
        ? [{ text: `Integration ${i.id} is disconnected`, href: '/dashboard/integrations' }]
        : [],
  );
};

const runsNeedingAPerson: Check = async ({ api, signal }, now) => {
  const alarms: Alarm[] = [];
  for (const state of ['Failed', 'Escalated'] as const) {
    const { runs } = await api.get<RunList>(`/runs?state=${state}&limit=1000`, signal);
    const recent = runs.filter((r) => now - Date.parse(r.completed_at ?? r.started_at) <= DAY_MS).length;
    if (recent > 0)
      alarms.push({
        text: `${formatNumber(recent)} workflow run${recent === 1 ? '' : 's'} ${state.toLowerCase()} in the last 24 hours`,
        href: `/dashboard/runs?state=${state}`,
      });
  }
  return alarms;
};

const webhooksDeadLettered: Check = async ({ api, signal }, now) =>
  (await webhookHealth(api, signal, now)).flatMap(({ webhook, deadLetters }) =>
    deadLetters.length === 0
      ? []
      : [
          {
            text: `${formatNumber(deadLetters.length)} webhook deliver${deadLetters.length === 1 ? 'y' : 'ies'} to ${webhook.url} dead-lettered in the last 24 hours`,
            href: '/dashboard/webhooks',
          },
        ],
  );

const budgetsNearLimit: Check = async ({ api, signal }) => {
  const licence = await api.get<LicenceStatus>('/licence/status', signal);
  if (licence.status === 'no_licence') return [{ text: 'No licence is loaded', href: '/dashboard/licence' }];
  const alarms: Alarm[] = [];
  if (licence.status !== 'active')
    alarms.push({
      text: `The licence is ${licence.status.replace('_', ' ')} (${formatNumber(licence.days_remaining)} days left)`,
      href: '/dashboard/licence',
    });
  for (const [type, { budget, used }] of Object.entries(licence.transaction_utilization)) {
    if (budget !== null && budget > 0 && used >= budget * NEAR_LIMIT)
      alarms.push({
        text: `Transaction budget ${type}: ${formatNumber(used)} of ${formatNumber(budget)} used`,
        href: '/dashboard/licence',
      });
  }
  const spend = licence.cloud_spend;
  if (spend !== null && spend.budget_usd > 0 && spend.spent_usd >= spend.budget_usd * NEAR_LIMIT)
    alarms.push({
      text: `Cloud spend: ${spend.spent_usd.toFixed(2)} of ${spend.budget_usd.toFixed(2)} USD used`,
      href: '/dashboard/licence',
    });
  return alarms;
};

const auditChain: Check = async ({ api, signal }) => {
  const verify = await api.get<VerifyResponse>('/security/verify', signal);
  return verify.valid === false
    ? [{ text: 'The audit chain does not verify', href: '/dashboard/audit' }]
    : [];
};

const auditCheckpoints: Check = async ({ api, signal }, now) => {
  const { enabled, checkpoints } = await api.get<AuditCheckpointList>(
    '/security/checkpoints?limit=1',
    signal,
  );
  if (!enabled) return [];
  const newest = checkpoints[0];
  if (newest === undefined)
    return [{ text: 'No audit checkpoint has been written yet', href: '/dashboard/audit' }];
  if (now - Date.parse(newest.checkpoint.at) > STALE_CHECKPOINT_MS)
    return [
      {
        text: `The newest audit checkpoint is stale (${formatTime(newest.checkpoint.at)})`,
        href: '/dashboard/audit',
      },
    ];
  return [];
};

/** Each check with the permission it needs: a person sees the alarms of what their role may read. */
const CHECKS: Array<{ action: string; label: string; check: Check }> = [
  { action: 'ChannelRead', label: 'channels', check: channelsInError },
  { action: 'IntegrationRead', label: 'integrations', check: integrationsDown },
  { action: 'WorkflowList', label: 'workflow runs', check: runsNeedingAPerson },
  { action: 'WebhookRead', label: 'webhooks', check: webhooksDeadLettered },
  { action: 'LicenceRead', label: 'the licence', check: budgetsNearLimit },
  { action: 'SecurityRead', label: 'the audit chain', check: auditChain },
  { action: 'SecurityAudit', label: 'the audit checkpoints', check: auditCheckpoints },
];

/**
 * The overview's "Needs attention" panel: channels in Error, integrations down, runs failed or
 * escalated in the last 24 hours, webhook deliveries dead-lettered in the last 24 hours, licence budgets at 80 % or more, an audit chain that does not
 * verify or a checkpoint that is missing or stale; each a link to its page. A check that cannot
 * load says so in the panel instead of hiding.
 */
export async function attentionPanel(context: PageContext): Promise<HTMLElement> {
  const now = Date.now();
  const results = await Promise.all(
    CHECKS.filter(({ action }) => context.session.can(action)).map(async ({ label, check }) => {
      try {
        return await check(context, now);
      } catch (error) {
        return [{ text: `Could not check ${label}: ${describeError(error)}`, href: '' }];
      }
    }),
  );
  const alarms = results.flat();
  return h(
    'section',
    { class: 'attention', 'aria-labelledby': 'attention-heading' },
    h('h2', { id: 'attention-heading' }, 'Needs attention'),
    alarms.length === 0
      ? h('p', { class: 'all-clear' }, 'Nothing needs attention.')
      : h(
          'ul',
          null,
          ...alarms.map((a) => h('li', null, a.href === '' ? a.text : h('a', { href: a.href }, a.text))),
        ),
  );
}
