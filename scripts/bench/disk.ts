// What the disk under the SQLite files costs: its file system and one fsync, measured before the load.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createLatencyRecorder } from './latency.ts';
import type { LatencySummary } from './protocol.ts';

export interface DiskReport {
  /** e.g. "ext4": on tmpfs an fsync costs nothing and the figures flatter. */
  filesystem: string;
  /** One fsync of a small write there. */
  fsyncMs: LatencySummary;
}

/** Probes the file system of `parentDir` (a fresh directory in it, removed after). */
export function probeDisk(parentDir: string): DiskReport {
  const dir = mkdtempSync(join(parentDir, 'bench-disk-'));
  try {
    return { filesystem: filesystemOf(dir), fsyncMs: probeFsync(dir) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Times 50 small writes each followed by fsync, as a commit with synchronous=FULL does. */
function probeFsync(dir: string): LatencySummary {
  const latency = createLatencyRecorder();
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  try {
    const page = Buffer.alloc(4096, 1);
    for (let i = 0; i < 50; i += 1) {
      const started = performance.now();
      writeSync(fd, page, 0, page.length, i * page.length);
      fsyncSync(fd);
      latency.record(performance.now() - started);
    }
  } finally {
    closeSync(fd);
  }
  return latency.summary();
}

const FILESYSTEMS: Record<number, string> = {
  0x01021994: 'tmpfs (fsync is free: the durable path looks cheaper than on a disk)',
  0xef53: 'ext4',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x794c7630: 'overlayfs',
  0x65735546: 'fuse',
};

function filesystemOf(dir: string): string {
  const { type } = statfsSync(dir);
  return FILESYSTEMS[type] ?? `file system type 0x${type.toString(16)}`;
}
