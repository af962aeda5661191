import { Component } from "preact";
import { useMemo } from "preact/hooks";
import type { Message } from "./api";
import { ago, contentText, when } from "./format";
import { onCopyClick, renderMarkdown } from "./markdown";
import { Badge } from "./ui";

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
  name?: string;
}

/** A tool call's name and its arguments, pretty when they are JSON. */
function callParts(call: unknown): { name: string; args: string } {
  const c = (call ?? {}) as ToolCall;
  const name = c.function?.name ?? c.name ?? "tool";
  let args: unknown = c.function?.arguments ?? call;
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      return { name, args: String(args) };
    }
  }
  return { name, args: JSON.stringify(args, null, 2) };
}

/**
 * Rendered HTML by content, the RENDERED_KEEP most recently used: a row scrolled out of the
 * virtual list and back (a new component each time) is not rendered again. Bounded (1,500
 * added 0.45 MiB to the benchmark's 3.3 MiB heap; 600 about 0.2), so memory stays flat
 * however far one reads.
 */
const rendered = new Map<unknown, string>();
const RENDERED_KEEP = 600;

function renderedHtml(content: unknown): string {
  const hit = rendered.get(content);
  if (hit !== undefined) {
    rendered.delete(content); // the most recently used last: the oldest go first
    rendered.set(content, hit);
    return hit;
  }
  const html =
    typeof content === "string"
      ? renderMarkdown(content)
      : renderMarkdown(`\`\`\`json\n${contentText(content)}\n\`\`\``);
  rendered.set(content, html);
  if (rendered.size > RENDERED_KEEP) rendered.delete(rendered.keys().next().value);
  return html;
}

/** Markdown text (safely: ./markdown.ts), JSON content as a code block. */
export function MessageBody({ content }: { content: unknown }) {
  const html = useMemo(() => renderedHtml(content), [content]);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: delegated clicks of the code blocks' Copy buttons
    // biome-ignore lint/a11y/noStaticElementInteractions: see above
    <div
      class="content markdown"
      onClick={(e) => onCopyClick(e as unknown as MouseEvent)}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

/** One transcript row: role, time (a permalink to the message), text, tool calls and results folded. */
function MessageRow({
  m,
  permalink,
  target,
}: {
  m: Message;
  permalink?: string;
  target?: boolean;
}) {
  const stamp = (
    <time dateTime={new Date(m.createdAt).toISOString()} title={when(m.createdAt)}>
      {ago(m.createdAt)}
    </time>
  );
  return (
    <li
      class={`message ${m.role}${m.active ? "" : " history"}${target ? " target" : ""}`}
      data-message-id={m.id}
      data-ordinal={m.ordinal}
      id={`m${m.ordinal}`}
      tabIndex={target ? -1 : undefined}
      aria-current={target ? "true" : undefined}
    >
      <div class="message-head">
        <span class="role">{m.role}</span>
        {m.name ? <span class="name">{m.name}</span> : null}
        {!m.active ? <Badge kind="history">{m.archivedReason ?? "history"}</Badge> : null}
        {permalink ? (
          <a class="permalink" href={permalink} title="Link to this message">
            {stamp}
          </a>
        ) : (
          stamp
        )}
      </div>
      {m.role === "tool" ? (
        <details class="tool-result">
          <summary>Tool result{m.toolCallId ? ` (${m.toolCallId})` : ""}</summary>
          <MessageBody content={m.content} />
        </details>
      ) : (
        <MessageBody content={m.content} />
      )}
      {m.toolCalls && m.toolCalls.length > 0 ? (
        <div class="tool-calls">
          {m.toolCalls.map((call, i) => {
            const { name, args } = callParts(call);
            return (
              <details key={i} class="tool-call">
                <summary>
                  Tool call <code>{name}</code>
                </summary>
                <pre>
                  <code>{args}</code>
                </pre>
              </details>
            );
          })}
        </div>
      ) : null}
    </li>
  );
}

interface RowProps {
  m: Message;
  permalink?: string;
  target?: boolean;
}

/**
 * One transcript row, rendered again only when its message, link or
 * highlight changes: scrolling the virtual list renders the rows that come
 * into view, not every row in view again.
 */
export class MessageItem extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    const p = this.props;
    return next.m !== p.m || next.permalink !== p.permalink || next.target !== p.target;
  }

  override render() {
    return <MessageRow {...this.props} />;
  }
}
