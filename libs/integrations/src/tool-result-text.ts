/** The parts of an MCP `tools/call` result the platform reads. */
export interface McpToolResult {
  content?: ReadonlyArray<Record<string, unknown>>;
  structuredContent?: unknown;
  isError?: boolean;
  toolResult?: unknown;
}

/**
 * An MCP tool result as the text handed back to the model: text blocks joined by new lines;
 * other blocks named (`[image image/png]`, `[resource file:///x]`) since a chat model cannot
 * take them through a tool message; `structuredContent` as JSON when there is no text at all.
 */
export function toolResultText(result: McpToolResult): string {
  const parts: string[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'image' || block.type === 'audio')
      parts.push(`[${String(block.type)} ${str(block.mimeType)}]`.trim());
    else if (block.type === 'resource') parts.push(resourceText(block.resource));
    else if (block.type === 'resource_link') parts.push(`[resource ${str(block.uri)}]`);
    else parts.push(JSON.stringify(block));
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    return JSON.stringify(result.structuredContent);
  if (parts.length === 0 && result.toolResult !== undefined) return JSON.stringify(result.toolResult);
  return parts.join('\n');
}

function resourceText(resource: unknown): string {
  const r = (resource ?? {}) as { uri?: unknown; text?: unknown };
  return typeof r.text === 'string' ? r.text : `[resource ${str(r.uri)}]`;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
