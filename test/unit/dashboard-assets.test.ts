import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compressions, loadAssets, precompress } from "../../src/dashboard/assets.js";
import { tempHome } from "../helpers/temp-home.js";

// The dashboard's front end is compressed by `npm run build`
// (scripts/compress-web.mjs), not at every start: brotli at quality 11 took
// ~360 ms of a dashboard start's CPU. A start reads the build's encodings,
// checks each against its file, and compresses only a file whose encodings
// are missing or wrong. Counted: compressions.count.

const JS = "export const x = 1;\n".repeat(500);

/** A front end as vite leaves it: index.html, a hashed script, an image. */
function web(): string {
  const dir = tempHome();
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>hearth</title>");
  writeFileSync(join(dir, "assets/index-abc.js"), JS);
  writeFileSync(join(dir, "favicon.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  return dir;
}

/** Loads `dir`, returning its assets and how many files the load compressed. */
function load(dir: string) {
  const before = compressions.count;
  const assets = loadAssets(dir);
  return { assets, compressed: compressions.count - before };
}

function expectEncodingsOfBody(assets: ReturnType<typeof loadAssets>, path: string) {
  const asset = assets.get(path)!;
  expect(brotliDecompressSync(asset.br!).equals(asset.body)).toBe(true);
  expect(gunzipSync(asset.gzip!).equals(asset.body)).toBe(true);
}

describe("the dashboard's compressed front end", () => {
  it("a start after the build compresses nothing and sends the build's encodings", () => {
    const dir = web();
    expect(precompress(dir)).toBe(2); // index.html and the script; not the image
    const { assets, compressed } = load(dir);
    expect(compressed).toBe(0);
    expect([...assets.keys()].sort()).toEqual([
      "/assets/index-abc.js",
      "/favicon.png",
      "/index.html",
    ]);
    expectEncodingsOfBody(assets, "/index.html");
    expectEncodingsOfBody(assets, "/assets/index-abc.js");
    expect(assets.get("/favicon.png")!.br).toBeUndefined();
  });

  it("without the build's encodings, a start compresses each text file itself", () => {
    const { assets, compressed } = load(web());
    expect(compressed).toBe(2);
    expectEncodingsOfBody(assets, "/assets/index-abc.js");
  });

  it("an encoding that does not decode to its file is never sent: the file is compressed again", () => {
    const dir = web();
    precompress(dir);
    // The script changed after its encodings were written (a stale .br).
    writeFileSync(join(dir, "assets/index-abc.js"), `${JS}// changed\n`);
    writeFileSync(join(dir, "index.html.br"), brotliCompressSync("something else"));
    const { assets, compressed } = load(dir);
    expect(compressed).toBe(2);
    expectEncodingsOfBody(assets, "/assets/index-abc.js");
    expectEncodingsOfBody(assets, "/index.html");
  });

  it("the front end `npm run build` made (dist/web) loads without compressing a file", () => {
    const { assets, compressed } = load(join(import.meta.dirname, "../../dist/web"));
    expect(assets.has("/index.html")).toBe(true);
    expect(compressed).toBe(0);
  });
});
