import { readFileSync, realpathSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import { nearestExisting } from "./inspect.js";

/**
 * statfs magic numbers of filesystems whose shared memory or byte-range
 * locks cannot be trusted across processes (or hosts) for SQLite's WAL.
 */
const UNSAFE_MAGIC: Record<number, string> = {
  26985: "nfs",
  20859: "smb",
  4283649346: "cifs",
  4266872130: "smb2",
  1702057286: "fuse",
  16914839: "9p",
  12805120: "ceph",
  1397113167: "afs",
  1937076805: "coda",
  22092: "ncp",
  18225520: "gfs2",
  1952539503: "ocfs2",
  198183888: "lustre",
};

/**
 * statfs magic numbers of local filesystems whose directories take a new
 * change time (ctime) at every entry created, unlinked or renamed in or out
 * of them, as POSIX asks: ext2/3/4, XFS, Btrfs, tmpfs, F2FS. Not overlayfs,
 * FUSE or network mounts, where what stat reports of a directory is
 * another layer's (src/files/quiet-dir.ts trusts only these).
 */
const DIR_CHANGE_TIME_MAGIC: ReadonlySet<number> = new Set([
  0xef53, // ext2/3/4
  0x58465342, // XFS
  0x9123683e, // Btrfs
  0x01021994, // tmpfs
  0xf2f52010, // F2FS
]);

/** Whether a directory's change time on this filesystem (statfs magic) moves at every entry change. */
export function dirChangeTimeTrusted(magic: number): boolean {
  return DIR_CHANGE_TIME_MAGIC.has(magic >>> 0);
}

/** mountinfo fstype names (or prefixes) that mean the same thing. */
const UNSAFE_FSTYPE =
  /^(nfs\d*|cifs|smb\d*|smbfs|fuse(\..*)?|fuseblk|virtiofs|9p|ceph|afs|coda|ncpfs|gfs2|ocfs2|lustre|glusterfs|sshfs|davfs|vboxsf|vmhgfs|prl_fs)$/;

export interface FilesystemInfo {
  /** The fstype from /proc/self/mountinfo, when it could be read. */
  fstype: string | undefined;
  /** statfs f_type as hex. */
  magic: string;
  mountPoint: string | undefined;
  /** Why WAL is unsafe here, or undefined when it is safe. */
  walUnsafeReason: string | undefined;
}

/** Describe the filesystem that holds `path` (which may not exist yet). */
export function inspectFilesystem(path: string): FilesystemInfo {
  // The filesystem the path is (or would be created) on: its nearest existing ancestor's.
  const dir = realpathSync(nearestExisting(dirname(path)));
  const { type } = statfsSync(dir);
  let mount: { fstype: string; mountPoint: string } | undefined;
  try {
    mount = findMount(readFileSync("/proc/self/mountinfo", "utf8"), dir);
  } catch {
    // Documented fallback: without mountinfo (non-Linux), statfs decides alone.
    mount = undefined;
  }
  return {
    fstype: mount?.fstype,
    magic: `0x${type.toString(16)}`,
    mountPoint: mount?.mountPoint,
    walUnsafeReason: classify(type, mount?.fstype),
  };
}

export function classify(magic: number, fstype: string | undefined): string | undefined {
  const byMagic = UNSAFE_MAGIC[magic >>> 0];
  if (byMagic)
    return `statfs reports a ${byMagic} filesystem (magic 0x${(magic >>> 0).toString(16)})`;
  if (fstype && UNSAFE_FSTYPE.test(fstype)) return `mountinfo reports a ${fstype} filesystem`;
  return undefined;
}

/** The mount whose mount point is the longest prefix of `dir`. */
export function findMount(
  mountinfo: string,
  dir: string,
): { fstype: string; mountPoint: string } | undefined {
  let best: { fstype: string; mountPoint: string } | undefined;
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const mountPoint = unescapeMount(left.split(" ")[4] ?? "");
    const fstype = right.split(" ")[0] ?? "";
    const inside = dir === mountPoint || mountPoint === "/" || dir.startsWith(`${mountPoint}/`);
    if (inside && (!best || mountPoint.length >= best.mountPoint.length)) {
      best = { fstype, mountPoint };
    }
  }
  return best;
}

function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}
