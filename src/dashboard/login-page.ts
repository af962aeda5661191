/** The login page: static HTML, no script, nothing from the request echoed into it. */
export function loginPage(problem: "none" | "invalid"): string {
  const note =
    problem === "invalid"
      ? `<p class="problem" role="alert">That login link is not valid any more (links work once, and expire).</p>`
      : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hearth dashboard: log in</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/login.css">
</head>
<body>
<main class="login">
<h1>hearth dashboard</h1>
${note}
<p>Open the login link the dashboard printed when it started, or get a fresh one on the machine it runs on:</p>
<pre><code>hearth dashboard link</code></pre>
<p>Each link works once and logs this browser in.</p>
</main>
</body>
</html>
`;
}

export const LOGIN_CSS = `:root{color-scheme:light dark;font-family:system-ui,sans-serif}
body{margin:0;display:grid;place-items:center;min-height:100vh;background:Canvas;color:CanvasText}
.login{max-width:32rem;padding:2rem}
h1{font-size:1.4rem}
pre{padding:.75rem 1rem;border-radius:6px;background:color-mix(in srgb,CanvasText 8%,Canvas)}
.problem{color:#b3261e;font-weight:600}
@media (prefers-color-scheme:dark){.problem{color:#f2b8b5}}
`;
