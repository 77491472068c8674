import type { Middleware } from 'openapi-fetch';
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import type { OpenApiDocument } from '../../scripts/client/api-document.ts';

/** One response the checker saw: which operation, which status, and what was wrong with it. */
export interface CheckedResponse {
  operation: string;
  status: number;
  problems: string[];
}

export interface ResponseChecker {
  /** Give this to the client: it checks each response before the call resolves. */
  middleware: Middleware;
  checked(): CheckedResponse[];
}

/**
 * Validates every JSON response a client receives against the schema the OpenAPI document
 * declares for that operation and status, with TypeBox's compiler (the library the api
 * validates requests with). A status the document does not declare for the operation is a
 * problem too: the generated types would not know that body.
 */
export function responseChecker(document: OpenApiDocument): ResponseChecker {
  const seen: CheckedResponse[] = [];
  const compiled = new Map<string, ReturnType<typeof Compile>>();
  const middleware: Middleware = {
    async onResponse({ request, response, schemaPath }) {
      const method = request.method.toLowerCase();
      const operation = `${request.method} ${schemaPath}`;
      const declared = (
        document.paths[schemaPath]?.[method] as
          { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> } | undefined
      )?.responses;
      const problems: string[] = [];
      const entry = declared?.[String(response.status)];
      if (entry === undefined) {
        problems.push(`status ${response.status} is not declared in the document`);
      } else if (response.status !== 204) {
        const schema = entry.content?.['application/json']?.schema;
        const text = await response.clone().text();
        if (schema === undefined) problems.push('no application/json schema declared');
        else {
          const key = `${operation} ${response.status}`;
          let check = compiled.get(key);
          if (check === undefined) {
            check = Compile(schema as TSchema);
            compiled.set(key, check);
          }
          const body: unknown = JSON.parse(text);
          if (!check.Check(body)) {
            for (const error of check.Errors(body))
              problems.push(`${error.instancePath || '/'} ${error.message}`);
          }
        }
      }
      seen.push({ operation, status: response.status, problems });
      return undefined;
    },
  };
  return { middleware, checked: () => [...seen] };
}
