import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { capturingLogger } from '../../test/helpers/stores.ts';
import { Inbox } from '../../test/helpers/wait.ts';
import type { LogPosition } from '../domain/index.ts';
import { createShortfall } from './feed-shortfall.ts';

const at = (seq: number): LogPosition => ({ txid: 1, seq });

describe('the shortfall of a log follower', () => {
  it('retries a read that stopped short of a committed position, warns once when that lasts, and says once when it caught up', async () => {
    const { logger, lines } = capturingLogger();
    const retries = new Inbox<number>();
    let read = at(1);
    // The reader's part: each retry reads again and tells the shortfall where it got to.
    const shortfall = createShortfall(logger, { pollIntervalMs: 20, heldBackWarningMs: 100 }, () => {
      retries.push(performance.now());
      shortfall.check(read, true);
    });
    onCleanup(async () => shortfall.stop());
    shortfall.expect(at(5));
    shortfall.check(read, true);
    const warning = await lines.first((line) => line.includes('live delivery is held back'));
    expect(JSON.parse(warning)).toMatchObject({ level: 40, position: at(1), expected: at(5) });
    const retried = retries.length;
    read = at(5);
    await lines.first((line) => line.includes('the notification log caught up'));
    expect(lines.filter((line) => line.includes('live delivery is held back'))).toHaveLength(1);
    expect(retried).toBeGreaterThan(1);
  });

  it('neither retries nor warns when nobody waits on what is short', async () => {
    const { logger, lines } = capturingLogger();
    let retries = 0;
    const shortfall = createShortfall(logger, { pollIntervalMs: 20, heldBackWarningMs: 0 }, () => (retries += 1));
    onCleanup(async () => shortfall.stop());
    shortfall.expect(at(5));
    shortfall.check(at(1), false);
    expect(retries).toBe(0);
    expect([...lines]).toEqual([]);
  });
});
