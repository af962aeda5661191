import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";
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
  /** Compressed once at start (text types only): what a browser that accepts them is sent. */
  br?: Buffer;
  gzip?: Buffer;
}

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt"]);

function compressed(name: string, body: Buffer): Pick<Asset, "br" | "gzip"> {
  if (!COMPRESSIBLE.has(extname(name))) return {};
  return {
    br: brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gzip: gzipSync(body, { level: 9 }),
  };
}

/** An encoding the request accepts (a `q=0` refuses it), brotli first. */
function accepted(header: string | undefined, coding: string): boolean {
  if (!header) return false;
  return header.split(",").some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (name !== coding) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Send a bundled file, brotli- or gzip-compressed when the browser accepts
 * it (`Content-Encoding`, and `Vary: Accept-Encoding` for caches).
 */
export function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  void reply.type(asset.type);
  if (!asset.br && !asset.gzip) return reply.send(asset.body);
  void reply.header("vary", "accept-encoding");
  const header = request.headers["accept-encoding"];
  if (asset.br && accepted(header, "br"))
    return reply.header("content-encoding", "br").send(asset.br);
  if (asset.gzip && accepted(header, "gzip"))
    return reply.header("content-encoding", "gzip").send(asset.gzip);
  return reply.send(asset.body);
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
      else {
        const body = readFileSync(full);
        assets.set(`/${rel}`, {
          body,
          type: TYPES[extname(name)] ?? "application/octet-stream",
          immutable: rel.startsWith("assets/"),
          ...compressed(name, body),
        });
      }
    }
  };
  walk("");
  return assets;
}
