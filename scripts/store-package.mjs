#!/usr/bin/env node
// Assembles hearth-store, the library alone, from dist/ (after `npm run
// build`): `node scripts/store-package.mjs [out-dir]` (default dist-store/),
// then `npm pack` or `npm publish` that directory. `hearth` stays the whole
// product (CLI, gateway, dashboard, scheduler, ACP agent) with every
// dependency they need; hearth-store carries only what
// `import { openStore } from "hearth-store"` and the adapters' entry points
// load (docs/api.md, "Library only").
// - Files: the modules reachable from the entry points of
//   scripts/store-package.json's exports, following static and dynamic
//   imports and the worker-thread scripts the store starts (builtFile("…")
//   literals), each with its .d.ts, plus the .d.ts files those import for
//   types. Same paths under dist/ as in hearth, so builtFile still finds them.
// - Dependencies, decided from that graph, versions from hearth's
//   package.json: hearth's optional peers stay optional peers; a package
//   imported by a module reached through static imports only is a
//   dependency; one reached only past a dynamic import (pg, behind
//   openStore({ url })) is an optional peer, installed by whoever uses it.
// - croner (cron expressions in the configuration, plain JavaScript) is
//   bundled into the one module that imports it, as scripts/bundle-zod.mjs
//   does for zod: one package fewer to install, ~10 kB of code instead of
//   croner's ~200 kB package. Native packages (better-sqlite3,
//   fs-native-extensions) and their loaders are never bundled.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "rolldown";
import ts from "typescript";
import { detachZodTypes } from "./store-package-types.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DIST = join(ROOT, "dist");
/** Plain-JavaScript packages inlined into the module that imports them. */
const BUNDLED = new Set(["croner"]);

/** The package name of a bare specifier ("@scope/name/sub" → "@scope/name"). */
function packageName(spec) {
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Imports of one built file: relative ones, packages, dynamic or not, and builtFile("…") targets. */
function importsOf(file) {
  const code = readFileSync(file, "utf8");
  const kind = file.endsWith(".d.ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const source = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, false, kind);
  const found = [];
  const add = (node, dynamic) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ spec: node.text, dynamic });
    else throw new Error(`${relative(ROOT, file)}: an import whose specifier is not a literal`);
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier) add(node.moduleSpecifier, false);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], true);
    } else if (ts.isImportTypeNode(node)) {
      add(node.argument.literal, false);
    } else if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === "builtFile"
    ) {
      const arg = node.arguments[0];
      if (!arg || !ts.isStringLiteralLike(arg))
        throw new Error(`${relative(ROOT, file)}: builtFile() of a non-literal`);
      found.push({ builtFile: arg.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Walks the graph from `entries` (paths under dist/). Returns every file
 * reached, and per package whether some module reached through static
 * imports alone imports it.
 */
function walk(entries) {
  const files = new Map(); // relative path → reached through static imports only
  const packages = new Map(); // name → statically reached
  const queue = entries.map((f) => [f, true]);
  while (queue.length > 0) {
    const [file, isStatic] = queue.shift();
    if (files.get(file) === true || files.get(file) === isStatic) continue;
    const path = join(DIST, file);
    if (!existsSync(path)) throw new Error(`dist/${file}: not built (run npm run build)`);
    files.set(file, isStatic);
    for (const found of importsOf(path)) {
      if (found.builtFile !== undefined) {
        // The worker-thread scripts the store starts; the CLI, the
        // dashboard's assets and package.json are not library files.
        if (!found.builtFile.endsWith(".js") || found.builtFile.startsWith("cli/"))
          throw new Error(`dist/${file}: builtFile("${found.builtFile}") is not a library file`);
        queue.push([found.builtFile, isStatic]);
      } else if (found.spec.startsWith(".")) {
        let target = relative(DIST, resolve(dirname(path), found.spec));
        if (file.endsWith(".d.ts")) target = target.replace(/\.js$/, ".d.ts");
        queue.push([target, isStatic && !found.dynamic]);
      } else if (!isBuiltin(found.spec)) {
        const name = packageName(found.spec);
        packages.set(name, (packages.get(name) ?? false) || (isStatic && !found.dynamic));
      }
    }
  }
  return { files, packages };
}

/** Inline the BUNDLED packages a copied module imports; its other imports stay as they are. */
async function bundleInto(file, out) {
  const input = join(DIST, file);
  const staged = `${input}.${process.pid}.store-bundle-tmp.js`;
  try {
    await build({
      input,
      platform: "node",
      logLevel: "warn",
      external: (id) =>
        !BUNDLED.has(packageName(id)) && (id.startsWith(".") || !id.startsWith("/")),
      output: { file: staged, format: "esm", minify: false, sourcemap: false },
    });
    const code = readFileSync(staged, "utf8");
    for (const { spec } of importsOf(staged).filter((f) => f.spec)) {
      if (BUNDLED.has(packageName(spec)) || spec.startsWith("/") || spec.startsWith("..")) {
        throw new Error(`${file}: the bundle still imports ${spec}`);
      }
    }
    writeFileSync(join(out, "dist", file), code);
  } finally {
    rmSync(staged, { force: true });
  }
}

/**
 * Writes the hearth-store package into `out` (emptied first). Returns its
 * manifest and the list of its files under dist/.
 */
export async function assembleStorePackage(out) {
  const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const template = JSON.parse(
    readFileSync(fileURLToPath(new URL("store-package.json", import.meta.url)), "utf8"),
  );
  const exported = Object.values(template.exports).filter((e) => typeof e === "object");
  const strip = (p) => p.replace(/^\.\/dist\//, "");
  const js = walk(exported.map((e) => strip(e.default)));
  const types = walk(exported.map((e) => strip(e.types)));

  const dependencies = {};
  const peerDependencies = {};
  const peerDependenciesMeta = {};
  for (const [name, isStatic] of [...js.packages].sort(([a], [b]) => a.localeCompare(b))) {
    if (BUNDLED.has(name) || root.peerDependencies?.[name]) continue;
    const version = root.dependencies?.[name];
    if (!version) throw new Error(`${name}: imported by the library, not in hearth's dependencies`);
    if (isStatic) dependencies[name] = version;
    else {
      peerDependencies[name] = `^${version}`;
      peerDependenciesMeta[name] = { optional: true };
    }
  }
  for (const [name, spec] of Object.entries(root.peerDependencies ?? {})) {
    peerDependencies[name] = spec;
    peerDependenciesMeta[name] = root.peerDependenciesMeta?.[name] ?? {};
  }
  for (const name of types.packages.keys()) {
    // zod: its types are written out below (scripts/store-package-types.mjs).
    if (!dependencies[name] && !peerDependencies[name] && name !== "zod")
      throw new Error(
        `${name}: the library's types import it; it is neither a dependency nor a peer`,
      );
  }

  rmSync(out, { recursive: true, force: true });
  const files = new Set([...js.files.keys(), ...types.files.keys()]);
  for (const file of js.files.keys()) {
    const dts = file.replace(/\.js$/, ".d.ts");
    if (existsSync(join(DIST, dts))) files.add(dts);
  }
  for (const file of files) {
    mkdirSync(dirname(join(out, "dist", file)), { recursive: true });
    cpSync(join(DIST, file), join(out, "dist", file));
  }
  for (const file of js.files.keys()) {
    if (importsOf(join(DIST, file)).some((f) => f.spec && BUNDLED.has(packageName(f.spec))))
      await bundleInto(file, out);
  }
  detachZodTypes(DIST, out, [...files]);

  const manifest = {
    name: template.name,
    version: root.version,
    description: template.description,
    type: root.type,
    license: root.license,
    engines: root.engines,
    os: root.os,
    main: template.exports["."].default,
    types: template.exports["."].types,
    exports: template.exports,
    files: ["dist", "README.md"],
    dependencies,
    peerDependencies,
    peerDependenciesMeta,
  };
  writeFileSync(join(out, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(out, "README.md"),
    `# ${template.name}

${template.description}

The same code as the \`hearth\` package's library entry (\`import { openStore } from "hearth"\`),
from the same build, published for programs that embed the store and run none of hearth's
processes. Installs ${Object.keys(dependencies).join(" and ")}; \`pg\` only when you open a
PostgreSQL store (\`npm install pg\`), the SDKs only for their adapter.

\`\`\`ts
import { openStore } from "${template.name}";
import { HearthSaver } from "${template.name}/langgraph";
import { HearthSession } from "${template.name}/openai-agents";
\`\`\`

Documentation: hearth's docs/api.md. The CLI, gateway, dashboard, scheduler and ACP agent are in
the \`hearth\` package.
`,
  );
  return { manifest, files: [...files].sort() };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = resolve(process.argv[2] ?? join(ROOT, "dist-store"));
  const { manifest, files } = await assembleStorePackage(out);
  console.log(
    `${manifest.name}@${manifest.version}: ${files.length} files in ${relative(process.cwd(), out) || "."}; dependencies: ${Object.keys(manifest.dependencies).join(", ")}; optional peers: ${Object.keys(manifest.peerDependencies).join(", ")}`,
  );
}
