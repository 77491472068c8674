import type { SearchAuditInput } from '@agent-platform/contracts';
import { searchAudit as queryAudit } from '../../routes/security-routes.ts';
import type { ToolHandler } from '../tool-context.ts';

/** search_audit: GET /security/audit (`limit` defaults to 20 from the input schema). */
export const searchAudit: ToolHandler<SearchAuditInput> = async (
  { deps },
  { limit, category, actor, since },
) => ({
  entries: await queryAudit(deps, { limit: limit ?? 20, category, actor, since }),
});
