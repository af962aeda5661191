import { useEffect, useState } from "preact/hooks";
import { get } from "../api";
import { Empty, ErrorBanner, Loading } from "../ui";

export function JobsPage() {
  const [data, setData] = useState<{ available: boolean; reason?: string; jobs: unknown[] } | null>(
    null,
  );
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<{ available: boolean; reason?: string; jobs: unknown[] }>("/api/jobs").then(
      setData,
      setError,
    );
  }, []);
  return (
    <section aria-labelledby="jobs-title">
      <div class="page-head">
        <h1 id="jobs-title">Jobs</h1>
      </div>
      <ErrorBanner error={error} />
      {data === null ? (
        error ? null : (
          <Loading what="jobs" />
        )
      ) : (
        <Empty title="No scheduled jobs yet">
          <p>
            hearth's scheduler is not built yet. Once it is, scheduled jobs and the result of every
            run show here.
          </p>
          <p class="muted">
            Until then, run maintenance from cron: <code>hearth backup</code>,{" "}
            <code>hearth doctor</code>.
          </p>
        </Empty>
      )}
    </section>
  );
}
