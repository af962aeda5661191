declare module "fs-native-extensions" {
  /** Non-blocking OFD (Linux) byte-range lock; false when another owner holds a conflicting lock. */
  export function tryLock(
    fd: number,
    offset: number,
    length: number,
    opts?: { shared?: boolean },
  ): boolean;
  export function waitForLock(
    fd: number,
    offset: number,
    length: number,
    opts?: { shared?: boolean },
  ): Promise<void>;
  export function unlock(fd: number, offset: number, length: number): void;
}
