import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { extname, join } from "node:path";
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  gunzipSync,
  gzipSync,
} from "node:zlib";
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
  /** Text types only: what a browser that accepts them is sent. */
  br?: Buffer;
  gzip?: Buffer;
}

const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".txt"]);
/** The files `npm run build` writes beside each compressible one (precompress()). */
const ENCODED = { br: ".br", gzip: ".gz" } as const;

/** How many files were compressed in this process: the build does it, a start should not (tests count it). */
export const compressions = { count: 0 };

function compress(body: Buffer): Required<Pick<Asset, "br" | "gzip">> {
  compressions.count++;
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

/** The build's encoding of `full`, when it is there and decodes to `body` exactly. */
function prebuilt(full: string, body: Buffer, coding: keyof typeof ENCODED): Buffer | undefined {
  try {
    const encoded = readFileSync(full + ENCODED[coding]);
    const decoded = coding === "br" ? brotliDecompressSync(encoded) : gunzipSync(encoded);
    return decoded.equals(body) ? encoded : undefined;
  } catch {
    return undefined; // missing, or not that encoding: compress it here
  }
}

/**
 * A text file's encodings: the build's (brotli at quality 11 took ~360 ms
 * of CPU at every dashboard start), checked against the file; compressed
 * here when one is missing or does not decode to the file.
 */
function encodings(full: string, body: Buffer): Pick<Asset, "br" | "gzip"> {
  if (!COMPRESSIBLE.has(extname(full))) return {};
  const br = prebuilt(full, body, "br");
  const gzip = prebuilt(full, body, "gzip");
  return br && gzip ? { br, gzip } : compress(body);
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

/** Every file under `dir`, by its path relative to it ("assets/x.js"), without the build's encodings. */
function files(dir: string, sub = ""): string[] {
  let names: string[];
  try {
    names = readdirSync(join(dir, sub));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const rel = sub ? `${sub}/${name}` : name;
    if (statSync(join(dir, rel)).isDirectory()) return files(dir, rel);
    return Object.values(ENCODED).some((ext) => name.endsWith(ext)) ? [] : [rel];
  });
}

/**
 * The bundled front end, read into memory once at start (a few files, a few
 * hundred KB): `/` → index.html, `/assets/…`, `/favicon.svg`. Empty when the
 * front end was not built; the pages then say how to build it.
 */
export function loadAssets(dir = WEB_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const rel of files(dir)) {
    const full = join(dir, rel);
    const body = readFileSync(full);
    assets.set(`/${rel}`, {
      body,
      type: TYPES[extname(rel)] ?? "application/octet-stream",
      immutable: rel.startsWith("assets/"),
      ...encodings(full, body),
    });
  }
  return assets;
}

/** Part of `npm run build` (scripts/compress-web.mjs): writes each text file's .br and .gz beside it. */
export function precompress(dir = WEB_DIR): number {
  let written = 0;
  for (const rel of files(dir)) {
    if (!COMPRESSIBLE.has(extname(rel))) continue;
    const full = join(dir, rel);
    const { br, gzip } = compress(readFileSync(full));
    writeFileSync(full + ENCODED.br, br);
    writeFileSync(full + ENCODED.gzip, gzip);
    written++;
  }
  return written;
}
