import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import type { TargetConfig } from "../../config/targets.js";
import { HearthError } from "../../errors.js";
import { readPrivateFile } from "../../store/pg/password.js";
import { copyHashed, type Staged, type Target, targetFailed } from "./target.js";

/**
 * An S3-compatible bucket (AWS, MinIO, s3rver, …) through the AWS SDK.
 * On AWS a PUT is atomic: an object is there whole or not at all. Not on
 * every server: s3rver answers 200 before its file is written, and one
 * stopped then keeps a half-written object under the full name. So no put
 * counts until a HEAD shows that what landed has the length sent (the
 * content itself is checked by the server against the SDK's checksum as it
 * arrives; an ETag is no MD5 under SSE-KMS, so it is not compared). A
 * mismatch removes the object (when it can) and fails the put
 * (HEARTH_TARGET_FAILED): the replicator ships those frames again at its
 * next tick, and a restore skips a twin that does not match its checksum.
 */
export class S3Target implements Target {
  readonly where: string;
  readonly name: string;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(t: TargetConfig, credentialsFile: string | undefined) {
    this.name = t.name;
    this.bucket = t.bucket!;
    this.prefix = t.prefix ? `${t.prefix}/` : "";
    this.where = `s3://${this.bucket}/${this.prefix}${t.endpoint ? ` at ${t.endpoint}` : ""}`;
    this.client = new S3Client({
      region: t.region,
      forcePathStyle: t.forcePathStyle,
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
      credentials: credentials(t, credentialsFile),
      ...(t.endpoint ? { endpoint: t.endpoint } : {}),
    });
  }

  async put(key: string, data: Buffer): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: data }),
      );
    } catch (err) {
      throw targetFailed(this, `writing ${key}`, err);
    }
    await this.verifyLanded(key, data.length);
  }

  /**
   * HEAD `key` until it shows `bytes` bytes, a few times (a server may still
   * be writing what it acknowledged). Still different: the object is removed
   * (best effort) and HEARTH_TARGET_FAILED says what landed.
   */
  private async verifyLanded(key: string, bytes: number): Promise<void> {
    let landed: number | undefined;
    for (let attempt = 0; attempt < VERIFY_HEADS; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, VERIFY_PAUSE_MS));
      try {
        const head = await this.client.send(
          new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
        );
        landed = head.ContentLength;
      } catch (err) {
        throw targetFailed(this, `reading back ${key} after writing it`, err);
      }
      if (landed === bytes) return;
    }
    await this.client
      .send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }))
      .catch(() => {});
    throw new HearthError(
      "HEARTH_TARGET_FAILED",
      `backup target ${this.name} (${this.where}) acknowledged ${key} but holds ${landed ?? "an unknown number of"} bytes of the ${bytes} sent; removed, to be sent again`,
      {
        resource: this.where,
        hint: "the server lost part of a write it acknowledged (stopped mid-write?); replication sends it again at its next tick",
      },
    );
  }

  /**
   * The file copied beside itself first (a hidden name in its directory, on
   * its disk: never whole in memory, and what is uploaded is exactly what
   * was hashed), then PUT from that copy as a stream of known length, S3
   * checking the SHA-256 as it receives it. One PUT: S3 takes up to 5 GiB
   * that way (a larger snapshot fails, HEARTH_TARGET_FAILED).
   */
  async stage(file: string): Promise<Staged> {
    await removeStaleCopies(file);
    const copy = join(
      dirname(file),
      `.${basename(file)}.put-${process.pid}-${randomBytes(4).toString("hex")}`,
    );
    const discard = () => rm(copy, { force: true });
    let staged: { sha: string; bytes: number };
    try {
      staged = await copyHashed(file, copy);
    } catch (err) {
      await discard().catch(() => {});
      throw targetFailed(this, `copying ${file}`, err);
    }
    return {
      ...staged,
      discard,
      publish: async (key) => {
        try {
          await this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: this.prefix + key,
              Body: createReadStream(copy),
              ContentLength: staged.bytes,
              ChecksumSHA256: Buffer.from(staged.sha, "hex").toString("base64"),
            }),
          );
        } catch (err) {
          throw targetFailed(this, `writing ${key}`, err);
        } finally {
          await discard().catch(() => {});
        }
        await this.verifyLanded(key, staged.bytes);
      },
    };
  }

  async get(key: string): Promise<Buffer> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
      );
      return Buffer.from(await out.Body!.transformToByteArray());
    } catch (err) {
      throw targetFailed(this, `reading ${key}`, err);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const out = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
        for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key.slice(this.prefix.length));
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw targetFailed(this, `listing ${prefix}`, err);
    }
    return keys;
  }

  async remove(keys: string[]): Promise<void> {
    try {
      for (const key of keys)
        await this.client.send(
          new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
        );
    } catch (err) {
      throw targetFailed(this, "removing old objects", err);
    }
  }
}

/** HEADs after a put before what landed counts as different, and the pause between them. */
const VERIFY_HEADS = 3;
const VERIFY_PAUSE_MS = 100;

/** Credentials from the file when one is configured, else from the environment variables named. */
function credentials(
  t: TargetConfig,
  file: string | undefined,
): { accessKeyId: string; secretAccessKey: string } {
  const values: Record<string, string> = {};
  if (file !== undefined) {
    for (const line of readPrivateFile(file, "credentials").split(/\r?\n/)) {
      const m = /^\s*([a-z_]+)\s*=\s*(\S+)\s*$/.exec(line);
      if (m) values[m[1]!] = m[2]!;
    }
  }
  const accessKeyId = file ? values.aws_access_key_id : process.env[t.accessKeyIdEnv];
  const secretAccessKey = file ? values.aws_secret_access_key : process.env[t.secretAccessKeyEnv];
  if (!accessKeyId || !secretAccessKey)
    throw new HearthError(
      "HEARTH_TARGET_FAILED",
      `backup target ${t.name}: no S3 credentials (${file ? `${file} lacks aws_access_key_id or aws_secret_access_key` : `${t.accessKeyIdEnv} and ${t.secretAccessKeyEnv} are not both set`})`,
      {
        resource: t.name,
        hint: "set the two variables, or point credentialsFile at a 0600 file holding aws_access_key_id = … and aws_secret_access_key = …",
      },
    );
  return { accessKeyId, secretAccessKey };
}

/** Copies left beside `file` by a process that died uploading (its pid gone). */
async function removeStaleCopies(file: string): Promise<void> {
  const prefix = `.${basename(file)}.put-`;
  const names = await readdir(dirname(file)).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    await rm(join(dirname(file), name), { force: true }).catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
