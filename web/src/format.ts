const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function ago(ms: number): string {
  const s = Math.round((ms - Date.now()) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return rtf.format(s, "second");
  if (abs < 2700) return rtf.format(Math.round(s / 60), "minute");
  if (abs < 64800) return rtf.format(Math.round(s / 3600), "hour");
  if (abs < 2592000) return rtf.format(Math.round(s / 86400), "day");
  return new Date(ms).toLocaleDateString();
}

export function when(ms: number): string {
  return new Date(ms).toLocaleString();
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "unknown";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** Message content as plain text (objects and arrays as indented JSON). Rendered as text, never HTML. */
export function contentText(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content, null, 2);
}

export function titleOf(s: { title: string | null; id: string }): string {
  return s.title ?? `Untitled ${s.id.slice(0, 8)}`;
}
