import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  classify,
  dirChangeTimeTrusted,
  findMount,
  inspectFilesystem,
} from "../../src/files/fs-type.js";

describe("classify", () => {
  it.each([
    [0x6969, "nfs"],
    [0xff534d42, "cifs"],
    [0xfe534d42, "smb2"],
    [0x517b, "smb"],
    [0x65735546, "fuse"],
    [0x01021997, "9p"],
    [0x00c36400, "ceph"],
  ])("magic 0x%s is unsafe (%s) whatever mountinfo says", (magic, name) => {
    const reason = classify(magic, "ext4");
    expect(reason).toBe(`statfs reports a ${name} filesystem (magic 0x${magic.toString(16)})`);
    expect(classify(magic, undefined)).toBe(reason);
  });

  it("reads a magic that arrived as a negative 32-bit number", () => {
    expect(classify(0xff534d42 | 0, undefined)).toMatch(/cifs.*0xff534d42/);
  });

  it.each([
    [0xef53, "ext4"],
    [0x01021994, "tmpfs"],
    [0x58465342, "xfs"],
    [0x9123683e, "btrfs"],
    [0x794c7630, "overlay"],
  ])("magic 0x%s with fstype %s is safe", (magic, fstype) => {
    expect(classify(magic, fstype)).toBeUndefined();
    expect(classify(magic, undefined)).toBeUndefined();
  });

  it.each([
    "nfs",
    "nfs4",
    "fuse",
    "fuse.sshfs",
    "fuseblk",
    "virtiofs",
    "9p",
    "cifs",
    "smb3",
    "ceph",
  ])("fstype %s is unsafe even when the magic is unknown", (fstype) => {
    expect(classify(0x12345678, fstype)).toBe(`mountinfo reports a ${fstype} filesystem`);
    expect(classify(0xef53, fstype)).toBe(`mountinfo reports a ${fstype} filesystem`);
  });

  it.each([
    "ext4",
    "nfsd",
    "fusectl",
    "smbfoo",
    "tmpfs",
    "overlay",
    "zfs",
  ])("fstype %s is not mistaken for a network filesystem", (fstype) => {
    expect(classify(0x12345678, fstype)).toBeUndefined();
  });
});

describe("dirChangeTimeTrusted", () => {
  it.each([
    [0xef53, "ext4"],
    [0x58465342, "xfs"],
    [0x9123683e, "btrfs"],
    [0x9123683e | 0, "btrfs, as a negative 32-bit number"],
    [0x01021994, "tmpfs"],
    [0xf2f52010, "f2fs"],
  ])("trusts magic 0x%s (%s)", (magic) => {
    expect(dirChangeTimeTrusted(magic)).toBe(true);
  });

  it.each([
    [0x794c7630, "overlay"],
    [0x65735546, "fuse"],
    [0x6969, "nfs"],
    [0x12345678, "unknown"],
  ])("does not trust magic 0x%s (%s)", (magic) => {
    expect(dirChangeTimeTrusted(magic)).toBe(false);
  });
});

const MOUNTINFO = [
  "22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
  "27 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/root rw,errors=remount-ro",
  "30 27 0:25 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=8g",
  "41 27 259:2 / /work rw,relatime shared:20 - xfs /dev/nvme0n1p2 rw,attr2,inode64",
  "58 41 0:52 / /work/nfs rw,relatime shared:31 - nfs4 server:/export rw,vers=4.2,addr=10.0.0.2",
  "61 27 0:54 / /home/me/My\\040Drive rw,nosuid,nodev,relatime shared:33 - fuse.rclone drive: rw,user_id=1000",
  "62 27 8:17 / /workspace rw,relatime shared:34 - btrfs /dev/sdb1 rw,ssd",
  "",
].join("\n");

describe("findMount", () => {
  it("picks the longest mount point that contains the directory", () => {
    expect(findMount(MOUNTINFO, "/work/nfs/agent")).toEqual({
      fstype: "nfs4",
      mountPoint: "/work/nfs",
    });
    expect(findMount(MOUNTINFO, "/work/nfs")).toEqual({ fstype: "nfs4", mountPoint: "/work/nfs" });
    expect(findMount(MOUNTINFO, "/work/main")).toEqual({ fstype: "xfs", mountPoint: "/work" });
    expect(findMount(MOUNTINFO, "/work")).toEqual({ fstype: "xfs", mountPoint: "/work" });
    expect(findMount(MOUNTINFO, "/etc")).toEqual({ fstype: "ext4", mountPoint: "/" });
    expect(findMount(MOUNTINFO, "/")).toEqual({ fstype: "ext4", mountPoint: "/" });
  });

  it("does not take /work for /workspace, nor /work/nfs for /work/nfsx", () => {
    expect(findMount(MOUNTINFO, "/workspace/a")).toEqual({
      fstype: "btrfs",
      mountPoint: "/workspace",
    });
    expect(findMount(MOUNTINFO, "/work/nfsx")).toEqual({ fstype: "xfs", mountPoint: "/work" });
    const withoutWorkspace = MOUNTINFO.split("\n")
      .filter((line) => !line.includes("/workspace"))
      .join("\n");
    expect(findMount(withoutWorkspace, "/workspace/a")).toEqual({
      fstype: "ext4",
      mountPoint: "/",
    });
  });

  it("unescapes \\040 in mount points", () => {
    expect(findMount(MOUNTINFO, "/home/me/My Drive/notes")).toEqual({
      fstype: "fuse.rclone",
      mountPoint: "/home/me/My Drive",
    });
    expect(findMount(MOUNTINFO, "/home/me/My")).toEqual({ fstype: "ext4", mountPoint: "/" });
  });

  it("takes the later of two mounts on the same point (the one on top)", () => {
    const stacked = `${MOUNTINFO}70 41 0:60 / /work rw - tmpfs tmpfs rw\n`;
    expect(findMount(stacked, "/work/main")).toEqual({ fstype: "tmpfs", mountPoint: "/work" });
  });

  it("returns undefined when nothing matches or the text is not mountinfo", () => {
    expect(findMount("", "/work")).toBeUndefined();
    expect(findMount("not mountinfo at all\n", "/work")).toBeUndefined();
    expect(findMount(MOUNTINFO.split("\n").slice(3, 5).join("\n"), "/etc")).toBeUndefined();
  });
});

describe("inspectFilesystem", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("finds this machine's temp dir safe for WAL", () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "hearth-fs-type-")));
    const info = inspectFilesystem(join(dir, "state.db"));
    expect(info.walUnsafeReason).toBeUndefined();
    expect(info.magic).toMatch(/^0x[0-9a-f]+$/);
    expect(info.fstype).toEqual(expect.any(String));
    expect(info.mountPoint).toEqual(expect.stringMatching(/^\//));
    expect(dir.startsWith(info.mountPoint === "/" ? "/" : `${info.mountPoint}/`)).toBe(true);
  });
});
