import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/** How long `hearth status` and doctor wait for a process's /v1/ready. */
export const READY_PROBE_MS = 3_000;

/** A process's resident memory from the kernel (/proc/<pid>/status VmRSS), null when unreadable. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export interface ChildReadiness {
  /** "ready" / "not ready" as the child answered; "unreachable" when it did not answer. */
  status: "ready" | "not ready" | "unreachable";
  reasons: { code: string; message: string; profile?: string }[];
}

/**
 * GET <address>/v1/ready of a hearth process of this home, on loopback (one
 * bound to every address is asked on 127.0.0.1). The answer carries no
 * secret, so a dashboard's own certificate is not checked; nothing is sent
 * but the request line.
 */
export function probeReady(address: string, timeoutMs = READY_PROBE_MS): Promise<ChildReadiness> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL("/v1/ready", address);
    } catch {
      resolve(unreachable("the process announced no address"));
      return;
    }
    if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1";
    const https = url.protocol === "https:";
    const req = (https ? httpsRequest : httpRequest)(
      url,
      { method: "GET", timeout: timeoutMs, ...(https ? { rejectUnauthorized: false } : {}) },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          body += d;
        });
        res.on("end", () => {
          try {
            const parsed = JSON.parse(body) as Partial<ChildReadiness>;
            resolve({
              status: res.statusCode === 200 ? "ready" : "not ready",
              reasons: Array.isArray(parsed.reasons) ? parsed.reasons : [],
            });
          } catch {
            resolve(unreachable(`/v1/ready answered ${res.statusCode} without JSON`));
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", (err) => resolve(unreachable(err.message)));
    req.end();
  });
}

function unreachable(message: string): ChildReadiness {
  return { status: "unreachable", reasons: [{ code: "HEARTH_CHILD_UNREACHABLE", message }] };
}
