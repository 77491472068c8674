import {
  AttestationBody,
  AttestationIdParams,
  AttestationList,
  AttestationQuery,
  AttestationView,
  ComplianceReport,
  ErrorEnvelope,
  PackIdParams,
  PackList,
  ReportFormatQuery,
} from '@agent-platform/contracts';
import { Type } from 'typebox';
import type { RoutePlugin } from '../api-app.ts';

const TAGS = ['compliance'];
const Errors400404 = { 400: ErrorEnvelope, 404: ErrorEnvelope };

/**
 * Spec §Endpoints "Compliance": the packs and their reports (JSON or PDF), plus the signed
 * attestations of manual controls (ours: docs/compliance.md "Attestations"). Reports read the
 * shared store, so every api node of a fleet answers the same report for the same state.
 */
export const complianceRoutes: RoutePlugin = (app, deps) => {
  app.get(
    '/compliance/packs',
    {
      config: { action: 'ComplianceRead' },
      schema: {
        tags: TAGS,
        summary:
          'The built-in packs and the carrier packs of [compliance] packs_dir (and those refused at load)',
        response: { 200: PackList },
      },
    },
    async () => deps.compliance.packs(),
  );

  app.get(
    '/compliance/packs/:id/report',
    {
      config: { action: 'ComplianceRead' },
      schema: {
        tags: TAGS,
        summary:
          'Evaluate every control of a pack against the platform now: the Report as JSON, or as a PDF download',
        params: PackIdParams,
        querystring: ReportFormatQuery,
        response: {
          200: {
            description:
              'format=json: the Report; format=pdf: the same report as a PDF download (docs/compliance.md "PDF report").',
            content: {
              'application/json': { schema: ComplianceReport },
              'application/pdf': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }) },
            },
          },
          ...Errors400404,
        },
      },
    },
    async (request, reply) => {
      const report = await deps.compliance.report(request.params.id);
      if (request.query.format === 'json') return report;
      // pdfkit and its fonts are loaded by the first PDF, not at boot (docs/performance.md "Memory").
      const { renderReportPdf } = await import('@agent-platform/compliance/pdf');
      const pdf = await renderReportPdf(report);
      // Spec §Compliance: the file name carries the framework id (a pack id: [a-z0-9._-], safe in a header).
      return reply
        .type('application/pdf')
        .header('content-disposition', `attachment; filename=compliance-report-${report.framework_id}.pdf`)
        .header('content-length', pdf.length)
        .send(pdf);
    },
  );

  app.get(
    '/compliance/attestations',
    {
      config: { action: 'ComplianceRead' },
      schema: {
        tags: TAGS,
        summary:
          'Signed attestations of manual controls, oldest first, with their state now and the key that verifies them',
        querystring: AttestationQuery,
        response: { 200: AttestationList },
      },
    },
    async (request) => ({
      key_id: deps.attestations.keyId,
      public_key: deps.attestations.publicKey,
      attestations: await deps.attestations.list(request.query),
    }),
  );

  app.post(
    '/compliance/attestations',
    {
      config: { action: 'ComplianceAttest', audit: 'compliance' },
      schema: {
        tags: TAGS,
        summary: 'Attest a manual control: the platform signs the statement, with the caller as attester',
        body: AttestationBody,
        response: { 201: AttestationView, ...Errors400404 },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await deps.attestations.create(request.body, request.caller)),
  );

  app.delete(
    '/compliance/attestations/:id',
    {
      config: { action: 'ComplianceAttest', audit: 'compliance' },
      schema: {
        tags: TAGS,
        summary:
          'Revoke an attestation: the record stays, its control is Unknown again unless another attestation is valid',
        params: AttestationIdParams,
        response: { 200: AttestationView, 404: ErrorEnvelope },
      },
    },
    async (request) => deps.attestations.revoke(request.params.id, request.caller),
  );
};
