/**
 * Every page of the dashboard, desktop (1280×800) and phone (390×844),
 * light and dark, in Chromium, served by the dashboard a real `hearth
 * start` runs (so Services shows a supervised home): no page wider than
 * the screen and axe-core finds no violations on any of them.
 * HEARTH_SCREENSHOTS=1 writes the 40 screenshots into docs/img/pages/
 * (docs/dashboard.md shows them); otherwise none are taken (nothing reads them).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/index.js";
import {
  axeViolations,
  doctorReported,
  launchBrowser,
  screenshotDir,
  settled,
  trackRequests,
} from "../helpers/browser.js";
import { CLI, runCli } from "../helpers/cli.js";
import { writeConfig } from "../helpers/gateway.js";
import { cleanupHomes, tempHome } from "../helpers/home.js";
import { type Child, spawnNode } from "../helpers/process.js";

const shots = screenshotDir();
const dir = join(shots.dir, "pages");

const TRANSCRIPT: [string, string][] = [
  ["user", "Plan a weekend in Lisbon for two: one museum, good seafood, a sunset spot."],
  [
    "assistant",
    "Here is a plan:\n\n1. **Saturday**: the *Gulbenkian* in the morning, lunch at Cervejaria Ramiro.\n2. **Sunday**: tram 28 to Alfama, sunset at the Miradouro da Senhora do Monte.\n\n```text\nbudget: ~180 EUR for two, trams included\n```\n\nWant me to book a table?",
  ],
  ["user", "Yes, Saturday 13:00, and remind me on Friday."],
  ["assistant", "Booked for Saturday 13:00. I will remind you on Friday at 9:00."],
];

let home: string;
let start: Child;
let address: string;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let tripId: string;

beforeAll(async () => {
  home = tempHome();
  writeConfig(home, {
    gateway: { port: 0 },
    dashboard: { port: 0 },
    scheduler: {
      port: 0,
      jobs: [
        { name: "reap", schedule: "0 5 * * *", kind: "reap-idle" },
        { name: "backup", schedule: "30 3 * * *", kind: "backup" },
      ],
    },
  });
  const store = await openStore({ home });
  try {
    const trip = await store.sessions.create({ source: "telegram", title: "Weekend in Lisbon" });
    tripId = trip.id;
    for (const [role, content] of TRANSCRIPT)
      await store.messages.append(trip.id, { role: role as "user" | "assistant", content });
    const titles = [
      ["slack", "Nightly backup report"],
      ["cli", "Refactor the tide-table parser"],
      ["web", "Draft the quarterly letter"],
      ["discord", "Tabletop session notes"],
      ["telegram", "Groceries for the week"],
      ["cli", "Why is the build slow?"],
    ] as const;
    for (let i = 0; i < 36; i++) {
      const [source, title] = titles[i % titles.length]!;
      const s = await store.sessions.create({
        source,
        title: `${title}${i >= 6 ? ` (${i})` : ""}`,
      });
      await store.messages.append(s.id, { role: "user", content: `${title}: where were we?` });
      await store.messages.append(s.id, { role: "assistant", content: "Right where we left it." });
    }
  } finally {
    await store.close();
  }
  start = spawnNode([CLI, "--home", home, "start"]);
  const ready = await start.json<{ event?: string; login?: string; address?: string }>(
    (e) => e.event === "dashboard.ready",
    "dashboard.ready",
  );
  await start.json<{ event?: string }>((e) => e.event === "start.ready", "start.ready");
  address = ready.address!;
  expect((await runCli(["cron", "run-now", "reap"], { home })).code).toBe(0);
  browser = await launchBrowser();
  trackRequests(browser.page);
  await browser.page.goto(ready.login!);
  await browser.page.waitForURL(`${address}/`);
  // The report first (the health page reads /api/health only every 5 s),
  // so the page's ready mark (.doctor-age) is there when it is opened.
  await doctorReported(browser.page);
  mkdirSync(dir, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (start?.running) {
    await runCli(["stop"], { home });
    await start.exited;
  }
  shots.cleanup();
  cleanupHomes();
});

const PAGES: [string, () => string, string][] = [
  ["sessions", () => "/sessions", "ul.sessions li"],
  ["session", () => `/sessions/default/${tripId}`, "ol.transcript li.message"],
  ["search", () => "/search?q=where", "main h1"],
  ["activity", () => "/activity?days=7", "figure.chart"],
  ["chat", () => "/chat", "main h1"],
  ["services", () => "/services", "table.children"],
  ["logs", () => "/logs", "main h1"],
  ["health", () => "/health", ".doctor-age"],
  ["jobs", () => "/jobs", "td.next-due"],
  ["audit", () => "/audit", "main h1"],
];

const SIZES = [
  ["desktop", { width: 1280, height: 800 }],
  ["phone", { width: 390, height: 844 }],
] as const;

describe("every dashboard page, desktop and phone, light and dark", () => {
  for (const [size, viewport] of SIZES)
    for (const scheme of ["light", "dark"] as const)
      it(
        `${size} ${scheme}: fits the screen, axe finds nothing`,
        { timeout: 120_000 },
        async () => {
          const page = browser.page;
          await page.setViewportSize(viewport);
          await page.emulateMedia({ colorScheme: scheme });
          for (const [name, path, ready] of PAGES) {
            await page.goto(`${address}${path()}`);
            await page.locator(ready).first().waitFor({ timeout: 30_000 });
            // Let late parts (live counts, charts) land before the checks and the picture.
            await settled(page);
            // Nothing wider than the screen (the first few culprits named when something is).
            const wide = await page.evaluate(`[...document.querySelectorAll("body *")]
              .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap"))
              .slice(0, 3)
              .map((e) => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`);
            expect({ name, wide }).toEqual({ name, wide: [] });
            expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
              viewport.width,
            );
            expect({ name, violations: await axeViolations(page, true) }).toEqual({
              name,
              violations: [],
            });
            await shots.shoot(page, `pages/${name}-${size}-${scheme}.png`);
          }
        },
      );
});
