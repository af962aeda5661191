import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { when } from "../format";
import { Badge, Empty, ErrorBanner, Loading, TableWrap } from "../ui";

interface Entry {
  id: number;
  profile: string;
  at: number;
  action: string;
  outcome: "ok" | "failed";
  actor: { kind: string; id: string; via: string; address: string | null };
  targets: string[];
  detail: Record<string, unknown> | null;
}

/** The audit trail: who deleted, archived, pruned, restored, repaired or exported what. Text only. */
export function AuditPage() {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<{ entries: Entry[] }>("/api/audit?limit=200").then((d) => setEntries(d.entries), setError);
  }, []);
  return (
    <section aria-labelledby="audit-title">
      <div class="page-head">
        <h1 id="audit-title">Audit</h1>
      </div>
      <ErrorBanner error={error} />
      {entries === null ? (
        error ? null : (
          <Loading what="the audit trail" />
        )
      ) : entries.length === 0 ? (
        <Empty title="Nothing audited yet">
          <p>
            Deletes, archives, prunes, restores, repairs, exports, token changes and logins show
            here; <code>hearth audit</code> lists them too.
          </p>
        </Empty>
      ) : (
        <div class="card">
          <TableWrap label="Audit events">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Profile</th>
                  <th scope="col">Action</th>
                  <th scope="col">Who</th>
                  <th scope="col">Targets</th>
                  <th scope="col">Detail</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e) => (
                  <tr key={`${e.profile}:${e.id}`}>
                    <td>{when(e.at)}</td>
                    <td>{e.profile}</td>
                    <td>
                      {e.action}{" "}
                      {e.outcome === "ok" ? null : <Badge kind="error">{e.outcome}</Badge>}
                    </td>
                    <td>
                      {`${e.actor.kind}:${e.actor.id} via ${e.actor.via}`}
                      {e.actor.address ? ` from ${e.actor.address}` : null}
                    </td>
                    <td>
                      {e.targets.length > 3
                        ? `${e.targets.slice(0, 3).join(", ")} and ${e.targets.length - 3} more`
                        : e.targets.join(", ")}
                    </td>
                    <td>{e.detail ? JSON.stringify(e.detail) : null}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </div>
      )}
    </section>
  );
}
