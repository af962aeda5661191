/**
 * A byte filter in front of the SDK's newline-delimited JSON reader: lines
 * pass through whole; a line longer than `maxBytes` is dropped (the SDK
 * would end the connection on it) and answered with a JSON-RPC -32600
 * error, carrying the request's id when it can be read from the line's
 * start, else id null. The process stays up and reads the next line.
 */
export function limitLines(
  input: ReadableStream<Uint8Array>,
  maxBytes: number,
  reject: (response: string) => void,
): ReadableStream<Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let skipping = false;
  let head = "";
  const answer = () => {
    const id = idFrom(head);
    reject(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32600,
          message: `Invalid request: the message is larger than ${maxBytes} bytes and was not read`,
        },
      })}\n`,
    );
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0;
        for (;;) {
          const nl = chunk.indexOf(0x0a, start);
          const end = nl === -1 ? chunk.length : nl + 1;
          const piece = chunk.subarray(start, end);
          if (!skipping) {
            if (size + piece.length > maxBytes + 1) {
              // The line's first bytes tell which request it was, if any.
              head = Buffer.concat([...parts, piece])
                .subarray(0, 4096)
                .toString("utf8");
              parts = [];
              size = 0;
              skipping = true;
            } else {
              parts.push(piece);
              size += piece.length;
            }
          }
          if (nl === -1) break;
          if (skipping) {
            answer();
            skipping = false;
          } else {
            controller.enqueue(Buffer.concat(parts));
            parts = [];
            size = 0;
          }
          start = end;
          if (start >= chunk.length) break;
        }
      },
      flush(controller) {
        if (skipping) answer();
        else if (size > 0) controller.enqueue(Buffer.concat(parts));
      },
    }),
  );
}

/** The JSON-RPC id at the start of a (cut) line, or null. */
function idFrom(head: string): string | number | null {
  const match = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})\s*[,}]/.exec(head);
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as string | number;
  } catch {
    return null;
  }
}
