import { useEffect, useState } from "preact/hooks";
import { get, query } from "../api";
import { MessagesChart } from "../chart";
import { ErrorBanner, Loading, TableWrap } from "../ui";

interface Bucket {
  at: number;
  source: string;
  messages: number;
  turns: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  p50Ms: number | null;
  p95Ms: number | null;
  /** dashboard.prices' cost of the priced models' tokens; null when none was priced. */
  cost: number | null;
  unpricedTokens: number;
}

interface Activity {
  since: number;
  bucketMs: number;
  profiles: { profile: string; buckets: Bucket[] }[];
}

const seconds = (ms: number | null) => (ms === null ? "–" : `${(ms / 1000).toFixed(1)} s`);
const money = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 4 });
const costOf = (cost: number | null, unpriced: number) =>
  cost === null ? "–" : `${money(cost)}${unpriced > 0 ? " + unpriced" : ""}`;
const dayLabel = (ms: number) =>
  new Date(ms).toLocaleDateString(undefined, { month: "short", day: "numeric" });

/**
 * Every bucket of the period, from `since` to now, at 0 (the chart's axis
 * spans the whole period, not only the days that have messages).
 */
function everyBucket(since: number, bucketMs: number): Map<number, number> {
  const out = new Map<number, number>();
  if (!(bucketMs > 0)) return out;
  for (let at = since; at <= Date.now() && out.size < 1000; at += bucketMs) out.set(at, 0);
  return out;
}

/**
 * Activity per profile: messages per day (bars with hover values) and, per
 * day and platform, messages, turns, failed turns, turn latency p50/p95 and
 * tokens and their cost (dashboard.prices), counted by the store (GET /api/activity).
 */
export function ActivityPage({ search }: { search: URLSearchParams }) {
  const days = search.get("days") ?? "30";
  const [data, setData] = useState<Activity | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setData(null);
    get<Activity>(`/api/activity${query({ days })}`).then(setData, setError);
  }, [days]);
  return (
    <section aria-labelledby="activity-title">
      <div class="page-head">
        <h1 id="activity-title">Activity</h1>
        <nav class="pager" aria-label="Period">
          {["1", "7", "30", "90"].map((d) => (
            <a key={d} href={`/activity?days=${d}`} aria-current={d === days ? "page" : undefined}>
              {d === "1" ? "24 hours" : `${d} days`}
            </a>
          ))}
        </nav>
      </div>
      <ErrorBanner error={error} onClose={() => setError(null)} />
      {data === null ? (
        error ? null : (
          <Loading what="activity" />
        )
      ) : (
        data.profiles.map((p) => {
          const perDay = everyBucket(data.since, data.bucketMs);
          for (const b of p.buckets) perDay.set(b.at, (perDay.get(b.at) ?? 0) + b.messages);
          const rows = [...p.buckets].sort((a, b) => b.at - a.at || (a.source < b.source ? -1 : 1));
          const total = (k: "messages" | "turns" | "errors" | "tokensIn" | "tokensOut") =>
            p.buckets.reduce((n, b) => n + b[k], 0);
          const priced = p.buckets.filter((b) => b.cost !== null);
          const cost = priced.length ? priced.reduce((n, b) => n + (b.cost ?? 0), 0) : null;
          return (
            <article class="card" key={p.profile} aria-labelledby={`activity-${p.profile}`}>
              <h2 id={`activity-${p.profile}`}>Profile {p.profile}</h2>
              <p class="muted">
                {total("messages").toLocaleString()} messages · {total("turns").toLocaleString()}{" "}
                turns · {total("errors").toLocaleString()} failed · tokens{" "}
                {total("tokensIn").toLocaleString()} in / {total("tokensOut").toLocaleString()} out
                {cost === null ? null : ` · cost ${money(cost)}`}
              </p>
              <MessagesChart
                days={[...perDay]
                  .sort((a, b) => a[0] - b[0])
                  .map(([day, messages]) => ({ day, messages }))}
              />
              {rows.length === 0 ? (
                <p class="muted">Nothing stored in this period.</p>
              ) : (
                <TableWrap label={`Activity of ${p.profile} per day and platform`}>
                  <table class="activity dense">
                    <thead>
                      <tr>
                        <th scope="col">Day</th>
                        <th scope="col">Platform</th>
                        <th scope="col">Messages</th>
                        <th scope="col">Turns</th>
                        <th scope="col">Failed</th>
                        <th scope="col">p50</th>
                        <th scope="col">p95</th>
                        <th scope="col">Tokens in/out</th>
                        <th scope="col">Cost</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((b) => (
                        <tr key={`${b.at}/${b.source}`}>
                          <td>{dayLabel(b.at)}</td>
                          <td>{b.source}</td>
                          <td>{b.messages.toLocaleString()}</td>
                          <td>{b.turns.toLocaleString()}</td>
                          <td class={b.errors > 0 ? "bad" : undefined}>{b.errors}</td>
                          <td>{seconds(b.p50Ms)}</td>
                          <td>{seconds(b.p95Ms)}</td>
                          <td>
                            {b.tokensIn || b.tokensOut
                              ? `${b.tokensIn.toLocaleString()} / ${b.tokensOut.toLocaleString()}`
                              : "–"}
                          </td>
                          <td>{costOf(b.cost, b.unpricedTokens)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableWrap>
              )}
            </article>
          );
        })
      )}
    </section>
  );
}
