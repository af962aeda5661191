#!/usr/bin/env node
// Part of `npm run build`, after vite builds the dashboard's front end into
// dist/web: writes each text file's brotli (.br) and gzip (.gz) encodings
// beside it, so that `hearth dashboard run` reads them instead of
// compressing at every start (~360 ms of CPU, brotli at quality 11). The
// dashboard checks that each decodes to its file and compresses the file
// itself when one does not (src/dashboard/assets.ts). vite empties
// dist/web at every build, so no encoding outlives its file's build.
import { precompress } from "../dist/dashboard/assets.js";

const written = precompress();
if (written === 0) {
  console.error("compress-web: no text file in dist/web (did vite build run?)");
  process.exit(1);
}
