import { createRequire } from "node:module";
import { once } from "./once.js";
import { z } from "./zod.js";

/** The config's host names: the addresses hearth listens on, and the names it answers for. */
const HOST_NAME = /^\.?(?!-)[A-Za-z0-9-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$/;

/**
 * node:net's isIP, loaded on the first host the config sets (~4 ms of a
 * command's start otherwise, for a check most configurations never run).
 */
const net = once(() => createRequire(import.meta.url)("node:net") as typeof import("node:net"));
const isIP = (value: string): number => net().isIP(value);

/** A host name (`.example.com` also allows its subdomains) or an IP literal; no port, no wildcard. */
export const allowedHost = once(() =>
  z
    .string()
    .refine(
      (v) => isIP(v.replace(/^\[|\]$/g, "")) !== 0 || HOST_NAME.test(v),
      'must be a host name (".example.com" allows its subdomains) or an IP address, without a port',
    ),
);

/** The address to listen on: an IP address or a host name; no port, no brackets, no spaces. */
export const bindHost = once(() =>
  z
    .string()
    .refine(
      (v) => isIP(v) !== 0 || (HOST_NAME.test(v) && !v.startsWith(".")),
      "must be an IP address or a host name to listen on (no port, brackets or spaces)",
    ),
);
