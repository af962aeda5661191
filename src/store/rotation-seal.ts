import { nodeCrypto } from "../builtins.js";
import type { TokenPair } from "./tokens.js";

/**
 * The result of a refresh rotation, sealed so that only a presenter of the
 * rotated refresh token can read it (D6 across hosts). The key is
 * HKDF-SHA256 of the presented token itself, the cipher AES-256-GCM with a
 * fresh nonce, and the token's hash (the row's key) is the associated data:
 * the database holds the hash and the ciphertext, neither of which yields a
 * usable token, and a sealed pair moved to another row does not open.
 *
 * Layout: version (1 byte) | nonce (12) | tag (16) | ciphertext.
 */
const VERSION = 1;
const SALT = Buffer.from("hearth refresh rotation v1");
const INFO = Buffer.from("sealed token pair");

function keyOf(refreshToken: string): Buffer {
  return Buffer.from(
    nodeCrypto().hkdfSync("sha256", Buffer.from(refreshToken, "utf8"), SALT, INFO, 32),
  );
}

export function sealPair(refreshToken: string, tokenHash: string, pair: TokenPair): Buffer {
  const nonce = nodeCrypto().randomBytes(12);
  const cipher = nodeCrypto().createCipheriv("aes-256-gcm", keyOf(refreshToken), nonce);
  cipher.setAAD(Buffer.from(tokenHash, "utf8"));
  const body = Buffer.concat([cipher.update(JSON.stringify(pair), "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, cipher.getAuthTag(), body]);
}

/** The pair, or undefined when this token does not open the seal (wrong token, tampered row). */
export function openPair(
  refreshToken: string,
  tokenHash: string,
  sealed: Uint8Array,
): TokenPair | undefined {
  const buf = Buffer.from(sealed);
  if (buf.length < 29 || buf[0] !== VERSION) return undefined;
  try {
    const decipher = nodeCrypto().createDecipheriv(
      "aes-256-gcm",
      keyOf(refreshToken),
      buf.subarray(1, 13),
    );
    decipher.setAAD(Buffer.from(tokenHash, "utf8"));
    decipher.setAuthTag(buf.subarray(13, 29));
    const text = Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]);
    const pair = JSON.parse(text.toString("utf8")) as TokenPair;
    return typeof pair.accessToken === "string" && typeof pair.refreshToken === "string"
      ? pair
      : undefined;
  } catch {
    return undefined;
  }
}
