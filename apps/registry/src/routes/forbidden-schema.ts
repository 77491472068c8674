import { ErrorEnvelope, FlatError } from '@agent-platform/contracts';
import { Type } from 'typebox';

/**
 * The 403 of a route behind `publish` or `admin` access: the auth hook's role refusal is the
 * spec's flat body `{error: "forbidden", message}` (§Authentication rule 6), an ownership refusal
 * of the route itself the envelope (`PermissionDenied`). A route declaring only one of them would
 * fail to serialize the other and answer 500 instead.
 */
export const Forbidden = Type.Union([ErrorEnvelope, FlatError]);
