import { pathToFileURL } from "node:url";
import { HearthError } from "../../errors.js";
import { judgeCodePath } from "../../files/trusted.js";

/**
 * Load one `tools.modules` entry. It runs with the process's rights, so it is
 * held to config.json's rule (S1) before it is imported: the file, the real
 * file a symbolic link leads to and every directory above it owned by this
 * user or root and not writable by group or others (files/trusted.ts). The
 * real path is what gets imported.
 */
export async function importToolModule(path: string): Promise<{ tools?: unknown }> {
  let judged: ReturnType<typeof judgeCodePath>;
  try {
    judged = judgeCodePath(path);
  } catch (err) {
    throw new HearthError(
      "HEARTH_CONFIG_INVALID",
      `tools.modules: cannot load ${path}: ${(err as Error).message}`,
      { resource: path, cause: err, hint: "fix the path in tools.modules (docs/gateway.md#tools)" },
    );
  }
  if ("refused" in judged) {
    const r = judged.refused;
    const at = r.path === path ? path : `${path}: its ${r.kind} ${r.path}`;
    throw new HearthError(
      "HEARTH_TOOL_MODULE_UNSAFE",
      `refusing tool module ${at} (owner uid ${r.uid}, mode ${r.mode}): ${r.why}`,
      {
        resource: r.path,
        details: { module: path, path: r.path, kind: r.kind, uid: r.uid, mode: r.mode },
        hint:
          r.kind === "symbolic link"
            ? `point tools.modules at the real file, or recreate the link as this user`
            : `check its contents, then: chown $(id -u) ${r.path} && chmod go-w ${r.path} (docs/security.md#tool-modules)`,
      },
    );
  }
  try {
    return (await import(pathToFileURL(judged.real).href)) as { tools?: unknown };
  } catch (err) {
    throw new HearthError(
      "HEARTH_CONFIG_INVALID",
      `tools.modules: cannot load ${path}: ${(err as Error).message}`,
      { resource: path, cause: err, hint: "see docs/gateway.md#tools" },
    );
  }
}
