import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { HearthError } from "../errors.js";

export interface UnitOptions {
  /** `node` and the CLI: ExecStart runs `<node> <cli> start`. */
  node: string;
  cli: string;
  home: string;
  /** A system unit runs as this user; a user unit as its owner. */
  user?: string;
  scope: "user" | "system";
}

/** Descriptors the unit allows (LimitNOFILE): room for many profiles, reader threads and connections. */
export const UNIT_NOFILE = 65_536;

/**
 * The systemd unit of `hearth start`, the one place its text lives
 * (docs/operations.md shows it for the example below; a test checks they
 * are equal). Exit 78 is a refusal a restart cannot fix: not restarted.
 */
export function renderUnit(o: UnitOptions): string {
  return `[Unit]
Description=hearth (gateway, scheduler, dashboard)
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
${o.scope === "system" && o.user ? `User=${o.user}\n` : ""}Environment=HEARTH_HOME=${o.home}
ExecStart=${o.node} ${o.cli} start
KillSignal=SIGTERM
# hearth start waits up to 80 s for its children to drain, then kills them.
TimeoutStopSec=90
Restart=on-failure
RestartSec=5
# A refusal a restart cannot fix is not a crash: do not loop on it.
RestartPreventExitStatus=78
# Store files, reader threads and connections of every profile (hearth doctor: nofile_low).
LimitNOFILE=${UNIT_NOFILE}

[Install]
WantedBy=${o.scope === "system" ? "multi-user.target" : "default.target"}
`;
}

/** The unit shown in docs/operations.md. */
export const DOC_EXAMPLE: UnitOptions = {
  node: "/usr/bin/node",
  cli: "/opt/hearth/dist/cli/main.js",
  home: "/var/lib/hearth",
  user: "hearth",
  scope: "system",
};

/** Where systemd reads units: `dir` (or $HEARTH_SYSTEMD_DIR) when given, else the scope's own folder. */
export function unitDir(scope: "user" | "system", dir?: string): string {
  const chosen = dir ?? process.env.HEARTH_SYSTEMD_DIR;
  if (chosen) return chosen;
  return scope === "system"
    ? "/etc/systemd/system"
    : join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "systemd", "user");
}

export interface InstallReport {
  path: string;
  unit: string;
  /** "written", "unchanged" (the same text was there) or "dry-run". */
  result: "written" | "unchanged" | "dry-run";
  /** What to run next (hearth never enables the unit itself). */
  next: string[];
}

/**
 * Write hearth.service (mode 0644, atomically). A different unit already
 * there is refused (HEARTH_UNIT_EXISTS) unless `force`; nothing is changed
 * on a dry run or a refusal. systemctl is left to the operator.
 */
export function installUnit(
  o: UnitOptions & { dir?: string; dryRun?: boolean; force?: boolean },
): InstallReport {
  const dir = unitDir(o.scope, o.dir);
  const path = join(dir, "hearth.service");
  const unit = renderUnit(o);
  const ctl = o.scope === "user" ? "systemctl --user" : "systemctl";
  const next = [`${ctl} daemon-reload`, `${ctl} enable --now hearth`];
  if (o.dryRun) return { path, unit, result: "dry-run", next };
  if (existsSync(path)) {
    if (readFileSync(path, "utf8") === unit) return { path, unit, result: "unchanged", next };
    if (!o.force)
      throw new HearthError("HEARTH_UNIT_EXISTS", `${path} already holds a different unit`, {
        resource: path,
        hint: "compare it with hearth service install --dry-run, then pass --force to replace it",
      });
  }
  // ~/.config/systemd/user may not exist yet; /etc/systemd/system always does.
  if (o.scope === "user") mkdirSync(dir, { recursive: true, mode: 0o755 });
  const staging = `${path}.hearth-tmp`;
  writeFileSync(staging, unit, { mode: 0o644 });
  renameSync(staging, path);
  return { path, unit, result: "written", next };
}
