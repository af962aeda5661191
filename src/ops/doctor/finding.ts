export type Severity = "ok" | "info" | "warning" | "error";

export interface Finding {
  /** Stable code (docs/cli.md lists them). */
  code: string;
  severity: Severity;
  message: string;
  /** The command that fixes it, when there is one. */
  fix?: string;
}

const RANK: Record<Severity, number> = { ok: 0, info: 1, warning: 2, error: 3 };

export function worst(findings: readonly Finding[]): Severity {
  return findings.reduce<Severity>((w, f) => (RANK[f.severity] > RANK[w] ? f.severity : w), "ok");
}
