import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/**
 * What the model reads of an MCP tool's result: its text parts, joined; a
 * part of another kind (image, audio, resource) as a one-line note; the
 * structured content as JSON when there is no text. A result the server
 * marks `isError` is thrown, so it is stored with status `error`.
 */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    if (part.type === "text") return part.text;
    if (part.type === "resource")
      return "text" in part.resource && typeof part.resource.text === "string"
        ? part.resource.text
        : `[resource ${part.resource.uri}]`;
    if (part.type === "resource_link") return `[resource ${part.uri}]`;
    return `[${part.type} ${"mimeType" in part ? part.mimeType : ""}]`.replace(" ]", "]");
  });
  const text =
    parts.length > 0 || result.structuredContent === undefined
      ? parts.join("\n")
      : JSON.stringify(result.structuredContent);
  if (result.isError) throw new Error(text || "the tool reported an error");
  return text;
}
