import { HearthError } from "../../errors.js";
import { lstatOrNull, stillInode } from "../../files/inspect.js";

/**
 * Refuse to reattach a store whose database file is no longer the inode
 * (`key`) this process opened: a restore or a copy put another file at the
 * path, or it was removed. HEARTH_GENERATION_CHANGED, with the way out.
 */
export function assertSameGeneration(path: string, key: string): void {
  if (stillInode(path, key)) return;
  const stats = lstatOrNull(path);
  throw new HearthError(
    "HEARTH_GENERATION_CHANGED",
    `${path} is no longer the database this process opened (it was ${stats ? "replaced" : "removed"}); this store cannot be reattached`,
    {
      resource: path,
      hint: "close this store and open a new one with openStore() (or restart the process)",
    },
  );
}
