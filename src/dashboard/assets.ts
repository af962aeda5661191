import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { builtFile } from "../files/built.js";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

export interface Asset {
  body: Buffer;
  type: string;
  /** Content-hashed files (under assets/) never change: cache them for a year. */
  immutable: boolean;
}

/** Where `npm run build` puts the front end: dist/web beside dist/dashboard. */
export const WEB_DIR = builtFile("web/");

/**
 * The bundled front end, read into memory once at start (a few files, a few
 * hundred KB): `/` → index.html, `/assets/…`, `/favicon.svg`. Empty when the
 * front end was not built; the pages then say how to build it.
 */
export function loadAssets(dir = WEB_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    let names: string[];
    try {
      names = readdirSync(join(dir, sub));
    } catch {
      return;
    }
    for (const name of names) {
      const rel = sub ? `${sub}/${name}` : name;
      const full = join(dir, rel);
      if (statSync(full).isDirectory()) walk(rel);
      else
        assets.set(`/${rel}`, {
          body: readFileSync(full),
          type: TYPES[extname(name)] ?? "application/octet-stream",
          immutable: rel.startsWith("assets/"),
        });
    }
  };
  walk("");
  return assets;
}
