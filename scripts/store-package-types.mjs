// Part of scripts/store-package.mjs: the library's .d.ts files without
// zod. The configuration's types are written as zod schemas in
// src/config/ (HearthConfig = z.infer<typeof configSchema>), so tsc's
// declarations import zod's types, and a TypeScript consumer checking with
// skipLibCheck: false would need zod (6 MB) installed for types alone: the
// library's code never loads it (dist/config/zod.js is a bundle). Here each
// .d.ts that imports "zod" is rewritten with the types TypeScript computes:
// a type alias over zod (HearthConfig, JobConfig, …) becomes the plain
// object type it stands for; a value typed by zod (the schemas themselves,
// internal, reachable by no export of the package) becomes `unknown`. Then
// every rewritten alias is checked to be assignable both ways with the
// original (built against zod) before the package is written.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const COMPILER = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  types: ["node"],
};

/** The local names a file's `import … from "zod"` binds (Z, array, enum_, …). */
function zodNames(source) {
  const names = [];
  for (const s of source.statements) {
    if (!ts.isImportDeclaration(s) || s.moduleSpecifier.text !== "zod") continue;
    const bindings = s.importClause?.namedBindings;
    if (s.importClause?.name) names.push(s.importClause.name.text);
    if (bindings && ts.isNamespaceImport(bindings)) names.push(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings))
      for (const e of bindings.elements) names.push(e.name.text);
  }
  return names;
}

/**
 * Rewrites, under `out`/dist, the .d.ts files among `files` (paths under
 * `dist`) that import "zod". Returns the rewritten files and aliases.
 */
export function detachZodTypes(dist, out, files) {
  const targets = files.filter(
    (f) =>
      f.endsWith(".d.ts") &&
      /(from |import\()\s*"zod["/]/.test(readFileSync(join(dist, f), "utf8")),
  );
  const program = ts.createProgram(
    targets.map((f) => join(dist, f)),
    COMPILER,
  );
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: false });
  const aliases = [];
  for (const file of targets) {
    const source = program.getSourceFile(join(dist, file));
    const names = zodNames(source);
    // By an imported name (`z.ZodObject`) or inline (`import("zod").ZodObject`, as tsc
    // writes a type it infers from a module that imports zod only for values).
    const mentions = (node) =>
      /import\(\s*"zod["/]/.test(node.getText(source)) ||
      names.some((n) => new RegExp(`\\b${n}\\b`).test(node.getText(source)));
    const edits = []; // [start, end, text]
    for (const s of source.statements) {
      if (ts.isImportDeclaration(s) && s.moduleSpecifier.text === "zod") {
        edits.push([s.getStart(source), s.getEnd(), ""]);
      } else if (ts.isTypeAliasDeclaration(s) && mentions(s.type)) {
        const node = checker.typeToTypeNode(
          checker.getTypeAtLocation(s.name),
          s,
          ts.NodeBuilderFlags.NoTruncation |
            ts.NodeBuilderFlags.InTypeAlias |
            ts.NodeBuilderFlags.MultilineObjectLiterals,
        );
        edits.push([
          s.type.getStart(source),
          s.type.getEnd(),
          printer.printNode(ts.EmitHint.Unspecified, node, source),
        ]);
        aliases.push({ file, name: s.name.text });
      } else if (ts.isVariableStatement(s)) {
        for (const d of s.declarationList.declarations) {
          if (d.type && mentions(d.type))
            edits.push([d.type.getStart(source), d.type.getEnd(), "unknown"]);
        }
      }
    }
    let text = source.getFullText();
    for (const [start, end, replacement] of edits.sort((a, b) => b[0] - a[0]))
      text = text.slice(0, start) + replacement + text.slice(end);
    const left = names.filter((n) => new RegExp(`\\b${n}\\.`).test(text));
    if (/(from |import\()\s*["']zod["'/]/.test(text) || left.length > 0)
      throw new Error(`${file}: zod's types are still referenced after the rewrite`);
    writeFileSync(join(out, "dist", file), text);
  }
  checkSameTypes(dist, out, aliases);
  return { files: targets, aliases };
}

/** Fails unless each rewritten alias and the original are assignable both ways. */
function checkSameTypes(dist, out, aliases) {
  const check = join(out, "types-check.ts");
  const lines = [];
  aliases.forEach(({ file, name }, i) => {
    const js = file.replace(/\.d\.ts$/, ".js");
    lines.push(
      `import type * as A${i} from ${JSON.stringify(join(dist, js))};`,
      `import type * as B${i} from ${JSON.stringify(join(out, "dist", js))};`,
      `declare const a${i}: A${i}.${name}; export const b${i}: B${i}.${name} = a${i};`,
      `declare const c${i}: B${i}.${name}; export const d${i}: A${i}.${name} = c${i};`,
    );
  });
  writeFileSync(check, `${lines.join("\n")}\n`);
  try {
    const program = ts.createProgram([check], COMPILER);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => !d.file || d.file.fileName === check || d.file.fileName.startsWith(out))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    if (problems.length > 0)
      throw new Error(`the rewritten configuration types differ:\n${problems.join("\n")}`);
  } finally {
    rmSync(check, { force: true });
  }
}
