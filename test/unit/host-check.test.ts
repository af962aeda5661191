import { describe, expect, it } from "vitest";
import {
  hostAllowed,
  hostPolicy,
  isLoopbackName,
  originAllowed,
} from "../../src/http/host-check.js";

describe("Host and Origin policy (S1, shared by the gateway and the dashboard)", () => {
  const policy = hostPolicy({ bind: "127.0.0.1", allowedHosts: ["agent.example", ".lan.example"] });

  it("allows loopback names, the bound address and the listed hosts, with or without a port", () => {
    for (const host of [
      "localhost",
      "LOCALHOST:8787",
      "localhost.",
      "127.0.0.1:8787",
      "127.8.9.10",
      "[::1]:8787",
      "[::ffff:127.0.0.1]",
      "agent.example",
      "a.b.lan.example:443",
    ]) {
      expect(hostAllowed(host, policy), host).toBe(true);
    }
  });

  it("refuses rebinding names, look-alikes, malformed values and a missing Host", () => {
    for (const host of [
      undefined,
      "",
      "evil.example",
      "localhost.evil.example",
      "127.0.0.1.nip.io",
      "lan.example",
      "xlan.example",
      "agent.example.evil",
      "::1",
      "[::1",
      "localhost:port",
      "user@localhost",
      "127.0.0.1 :8787",
      "127.0.0.1 x",
      "local host",
    ]) {
      expect(hostAllowed(host, policy), String(host)).toBe(false);
    }
  });

  it("treats only 127.0.0.0/8, ::1 and localhost as loopback", () => {
    expect(isLoopbackName("127.255.0.1")).toBe(true);
    expect(isLoopbackName("::1")).toBe(true);
    expect(isLoopbackName("0.0.0.0")).toBe(false);
    expect(isLoopbackName("::")).toBe(false);
    expect(isLoopbackName("10.0.0.1")).toBe(false);
    expect(isLoopbackName("localhost.example")).toBe(false);
  });

  it("allows no Origin and same-host origins; refuses other sites, opaque and non-http origins", () => {
    expect(originAllowed(undefined, policy)).toBe(true);
    expect(originAllowed("http://localhost:8787", policy)).toBe(true);
    expect(originAllowed("https://agent.example", policy)).toBe(true);
    expect(originAllowed("http://evil.example", policy)).toBe(false);
    expect(originAllowed("null", policy)).toBe(false);
    expect(originAllowed("file://", policy)).toBe(false);
  });

  it("answers for a specific bound address, and for local addresses on a wildcard bind", () => {
    expect(hostAllowed("192.0.2.7:8787", hostPolicy({ bind: "192.0.2.7" }))).toBe(true);
    expect(hostAllowed("192.0.2.8", hostPolicy({ bind: "192.0.2.7" }))).toBe(false);
    expect(hostAllowed("evil.example", hostPolicy({ bind: "0.0.0.0" }))).toBe(false);
  });
});
