import { lastFrameHeader, segmentFrames } from "../../store/sqlite/wal-ship/segment.js";
import type { WalSource } from "../../store/sqlite/wal-ship/source.js";
import type { WalHeader, WalPosition } from "../../store/sqlite/wal-ship/wal-file.js";
import { getVerified, listReplica } from "./layout.js";
import type { Target } from "./target.js";

/** Where a generation on the target stands: what shipping it on needs. */
export interface Resumable {
  id: string;
  walSeq: number;
  pos: WalPosition;
  snapshotAt: number;
}

/**
 * The newest generation of `profile` on the target, if the WAL as it is
 * now continues it (read under the caller's hold, so it cannot start over
 * while this looks): the generation has a snapshot, its last segment ends
 * at a frame of the WAL's current run (same salts), and that frame's header
 * in the WAL (page, commit size, salts, running checksum) is byte for byte
 * the one shipped. The checksum runs over every frame before it since the
 * WAL started, so equal headers mean the same frames. Anything else
 * (no generation, no snapshot, an unreadable segment, a WAL that started
 * over or was replaced since) is undefined: the caller starts a new
 * generation with a snapshot. The caller must still check, after shipping
 * the frames past this position, that the WAL did not start over while it
 * read them (Replicator.startGeneration).
 */
export async function resumable(
  target: Target,
  profile: string,
  source: WalSource,
  header: WalHeader,
): Promise<Resumable | undefined> {
  const { snapshots, segments } = await listReplica(target, profile);
  const id = [...snapshots, ...segments]
    .map((o) => o.generation)
    .sort()
    .pop();
  if (!id) return undefined;
  const snapshot = snapshots.filter((s) => s.generation === id).pop();
  const last = segments.filter((s) => s.generation === id).pop();
  if (!snapshot || !last || last.walSeq < snapshot.walSeq || last.to === 0) return undefined;
  const shipped = lastFrameHeader(
    segmentFrames(await getVerified(target, last), last.packed),
    header.pageSize,
  );
  const now = await source.frameHeader(header, last.to - 1);
  if (!shipped || !now || !now.equals(shipped)) return undefined;
  if (now.readUInt32BE(8) !== header.salt1 || now.readUInt32BE(12) !== header.salt2)
    return undefined;
  return {
    id,
    walSeq: last.walSeq,
    pos: {
      salt1: header.salt1,
      salt2: header.salt2,
      frame: last.to,
      checksum: [now.readUInt32BE(16), now.readUInt32BE(20)],
    },
    snapshotAt: Math.max(...snapshots.filter((s) => s.generation === id).map((s) => s.at)),
  };
}
