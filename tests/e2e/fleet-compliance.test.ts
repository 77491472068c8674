import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttestationView, ComplianceReport } from '@agent-platform/contracts';
import { pdfPages } from '@agent-platform/compliance/testing';
import { createAuditTrail, systemClock } from '@agent-platform/domain';
import { openEmbeddedStore } from '@agent-platform/store/embedded';
import { requireBinary, waitUntil } from '@agent-platform/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../support/fleet.ts';
import { call } from '../support/platform-process.ts';

// Compliance reports in a fleet (docs/compliance.md "Fleet"): two api nodes over one store. An
// attestation made through one node counts in the reports of the other (attestations live in the
// store, signed with the key both nodes share). A node is SIGKILLed while it builds a PDF of a
// long audit trail; the other node then answers the same report, and the trail is intact.
const natsBinary = requireBinary('nats-server');
const redisBinary = requireBinary('redis-server');

/** Enough entries that a report's full walk of the chain takes a good fraction of a second. */
const TRAIL_ENTRIES = 30_000;

/** CPU time (user + system, in clock ticks of 10 ms) a process has used, from /proc. */
async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Starts a GET and resolves once the request is on the wire; `done` settles with the outcome. */
function startGet(
  url: string,
  token: string,
): Promise<{ done: Promise<{ status: number } | { error: string }> }> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { headers: { authorization: `Bearer ${token}` } });
    const done = new Promise<{ status: number } | { error: string }>((settle) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => settle({ status: res.statusCode ?? 0 }));
        res.on('error', (e) => settle({ error: e.message }));
      });
      req.on('error', (e) => settle({ error: e.message }));
    });
    req.on('finish', () => resolve({ done }));
    req.end();
  });
}

/** A report without what differs between two reads of the same state at different times. */
function stable(report: ComplianceReport): unknown {
  const { generated_at: _g, report_sha256: _h, ...rest } = report;
  return {
    ...rest,
    controls: rest.controls.map(({ evaluated_at: _e, evidence_description, ...c }) => ({
      ...c,
      evidence_description: evidence_description.replace(/ in the last 365 days/g, ''),
    })),
  };
}

describe.skipIf(natsBinary === null || redisBinary === null)(
  'compliance in a fleet: 2 api nodes, one store',
  () => {
    let fleet: Fleet;
    let auditor: string;

    beforeAll(async () => {
      fleet = await startFleet({ apis: 2, workers: 0, schedulers: 0 });
      const [a, b] = fleet.urls as [string, string];
      const admin = (await call(a, 'POST', '/auth/keys', { body: { name: 'admin', role: 'admin' } })).body
        .secret as string;
      auditor = (
        await call(b, 'POST', '/auth/keys', {
          token: admin,
          body: { name: 'external-auditor', role: 'auditor', expires_in: '90d' },
        })
      ).body.secret as string;
      // A long trail, appended through the audit trail of one more process on the shared store
      // (without a sync per commit: this filler needs no durability, and it is 10x faster).
      const store = await openEmbeddedStore({
        path: join(fleet.dir, 'data', 'platform.db'),
        durability: 'normal',
      });
      try {
        const audit = createAuditTrail({ store, clock: systemClock, enabled: true });
        for (let i = 0; i < TRAIL_ENTRIES; i++) {
          await audit.record({
            category: 'request',
            identity: 'loader',
            role: 'admin',
            action: 'POST /loader',
            target: '/loader',
            result: '200',
            metadata: { i },
          });
        }
      } finally {
        await store.close();
      }
    }, 240_000);

    afterAll(async () => {
      await fleet?.close();
    });

    it('an attestation made on one node counts on the other; a node killed mid-PDF leaves the other answering the same report', async () => {
      const [a, b] = fleet.urls as [string, string];
      const created = await call(a, 'POST', '/compliance/attestations', {
        token: auditor,
        body: {
          pack_id: 'naic-ais-bulletin',
          control_id: 'NAIC-01',
          document_sha256: 'c'.repeat(64),
          statement: 'Board adopted the AIS Program.',
          expires_at: new Date(Date.now() + 365 * 86_400_000).toISOString(),
        },
      });
      expect(created.status, created.text).toBe(201);
      const attestation = created.body as AttestationView;

      const onB = await call(b, 'GET', '/compliance/packs/naic-ais-bulletin/report', { token: auditor });
      expect(onB.status, onB.text).toBe(200);
      const reportB = onB.body as ComplianceReport;
      expect(reportB.controls.find((c) => c.control_id === 'NAIC-01')).toMatchObject({
        status: 'Satisfied',
        attestation: { id: attestation.id, state: 'valid', identity: 'external-auditor' },
      });
      expect(reportB.integrity).toMatchObject({ valid: true });
      expect(reportB.integrity.entry_count).toBeGreaterThan(TRAIL_ENTRIES);

      // Node B builds the PDF (a full walk of the chain first); once it has spent CPU on it, SIGKILL.
      const victim = fleet.apis[1]!;
      const pid = victim.child.pid!;
      const before = await cpuTicks(pid);
      const { done } = await startGet(`${b}/compliance/packs/naic-ais-bulletin/report?format=pdf`, auditor);
      await waitUntil(async () => (await cpuTicks(pid)) - before >= 15, {
        timeoutMs: 20_000,
        intervalMs: 5,
        message: `node B working on the report\n${fleet.logs()}`,
      });
      await victim.kill();
      expect(await done).toEqual({ error: expect.any(String) });

      // Node A answers the same report: same state, same statuses, same integrity anchor.
      const pdf = await fetch(`${a}/compliance/packs/naic-ais-bulletin/report?format=pdf`, {
        headers: { authorization: `Bearer ${auditor}` },
      });
      expect(pdf.status).toBe(200);
      expect(pdf.headers.get('content-disposition')).toBe(
        'attachment; filename=compliance-report-naic-ais-bulletin.pdf',
      );
      const pages = await pdfPages(new Uint8Array(await pdf.arrayBuffer()));
      const text = pages.join(' ');
      expect(text).toContain(reportB.integrity.tip_hash!);
      expect(text).toContain('By external-auditor (auditor)');
      const onA = (await call(a, 'GET', '/compliance/packs/naic-ais-bulletin/report', { token: auditor }))
        .body as ComplianceReport;
      expect(stable(onA)).toEqual(stable(reportB));
      const verify = await call(a, 'GET', '/security/verify?full=true', { token: auditor });
      expect(verify.body).toMatchObject({ valid: true, entry_count: reportB.integrity.entry_count });
    });
  },
);
