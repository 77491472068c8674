import type { Static } from 'typebox';
import type { TaxonomyCategory } from '@agent-platform/contracts';

export type Category = Static<typeof TaxonomyCategory>;

/**
 * The registry's built-in taxonomy (docs/registry-search.md "Taxonomy"): what `[package.metadata]
 * categories` and a collection's `[metadata] categories` may name. Insurance first, the domain
 * the platform serves, then a few general shelves for building blocks that are not insurance
 * work as such. A path's parent is always listed too, and search by a path matches its
 * sub-paths, so a package need only name its most specific category.
 *
 * Changing this list changes the taxonomy's `version` (GET /taxonomy/version); removing a path
 * makes packages that name it unpublishable in their next version, so remove with care.
 */
export const INSURANCE_TAXONOMY: readonly Category[] = [
  cat('insurance', 'Insurance', 'Work of carriers, MGAs, brokers and their service providers.'),
  cat('insurance/claims', 'Claims', 'Handling a loss from first notice to settlement and recovery.'),
  cat('insurance/claims/fnol', 'First notice of loss', 'Taking the first report of a loss, by any channel, and opening the claim.'),
  cat('insurance/claims/triage', 'Claims triage', 'Routing, severity scoring and assignment of new claims.'),
  cat('insurance/claims/adjudication', 'Claims adjudication', 'Coverage checks, liability and the settlement decision.'),
  cat('insurance/claims/settlement', 'Claims settlement', 'Payments, reserves and closing a claim.'),
  cat('insurance/claims/subrogation', 'Subrogation and recovery', 'Recovering paid losses from third parties, salvage.'),
  cat('insurance/underwriting', 'Underwriting', 'Assessing, selecting and pricing risks.'),
  cat('insurance/underwriting/risk-assessment', 'Risk assessment', 'Scoring a submission from its data, documents and third-party sources.'),
  cat('insurance/underwriting/pricing', 'Pricing and rating', 'Rating engines, premium calculation and quotes.'),
  cat('insurance/underwriting/submissions', 'Submission intake', 'Reading broker submissions and clearing them for an underwriter.'),
  cat('insurance/policy', 'Policy administration', 'Issuing and servicing policies over their life.'),
  cat('insurance/policy/issuance', 'Policy issuance', 'Binding, issuing and delivering policy documents.'),
  cat('insurance/policy/endorsements', 'Endorsements', 'Mid-term changes to a policy.'),
  cat('insurance/policy/renewals', 'Renewals', 'Renewal offers, re-rating and retention.'),
  cat('insurance/policy/cancellations', 'Cancellations', 'Cancellation, reinstatement and their notices.'),
  cat('insurance/billing', 'Billing', 'Invoicing, payment plans, collections and refunds.'),
  cat('insurance/fraud', 'Fraud', 'Detecting and investigating suspicious claims and applications.'),
  cat('insurance/customer-service', 'Customer service', 'Answering policyholders, brokers and claimants across channels.'),
  cat('insurance/compliance', 'Compliance', 'Regulatory obligations, audits and complaint handling.'),
  cat('insurance/compliance/regulatory-reporting', 'Regulatory reporting', 'Returns and reports owed to supervisors.'),
  cat('insurance/compliance/complaints', 'Complaints', 'Recording, tracking and answering complaints within their deadlines.'),
  cat('insurance/distribution', 'Distribution', 'Agents, brokers, bancassurance and direct sales.'),
  cat('insurance/distribution/commissions', 'Commissions', 'Computing and paying intermediaries.'),
  cat('insurance/reinsurance', 'Reinsurance', 'Treaties, facultative placements, cessions and bordereaux.'),
  cat('insurance/actuarial', 'Actuarial', 'Reserving, loss triangles and experience studies.'),
  cat('insurance/documents', 'Insurance documents', 'Reading and producing policy wordings, certificates and letters.'),
  cat('integrations', 'Integrations', 'Connections to systems outside the platform.'),
  cat('integrations/core-systems', 'Core systems', 'Policy, claims and billing systems of record.'),
  cat('integrations/communications', 'Communications', 'Email, messaging, telephony and document delivery.'),
  cat('integrations/payments', 'Payments', 'Payment providers and banking.'),
  cat('data', 'Data', 'Getting, cleaning and enriching data.'),
  cat('data/extraction', 'Data extraction', 'Reading structured data out of documents, images and forms.'),
  cat('data/enrichment', 'Data enrichment', 'Adding third-party data: addresses, vehicles, weather, firmographics.'),
  cat('data/analytics', 'Analytics', 'Reports, dashboards and metrics.'),
  cat('security', 'Security', 'Identity checks, sanctions screening and data protection.'),
  cat('productivity', 'Productivity', 'General-purpose helpers: summaries, translation, scheduling.'),
];

function cat(path: string, title: string, description: string): Category {
  return { path, title, description };
}
