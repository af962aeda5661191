// Where SQLite's unix VFS takes its locks. Kept apart from guard.ts (which
// takes them, through fs-native-extensions) so code that only reads
// /proc/locks (holders, doctor, ps) never loads the native addon.

/** SQLite's unix VFS: the SHARED lock range of the database file. */
export const SQLITE_SHARED_FIRST = 0x40000002;
export const SQLITE_SHARED_SIZE = 510;
/** The -shm "dead man switch" byte every WAL connection holds a read lock on. */
export const SQLITE_SHM_DMS = 128;
