import { describe, expect, it } from 'vitest';
import { WaitQueue } from '../../src/util/wait-queue.js';

describe('WaitQueue', () => {
  it('hands out waiters oldest first, and the taker settles their promises', async () => {
    const q = new WaitQueue<string, number>();
    const a = q.wait('a');
    const b = q.wait('b');
    expect(q.values()).toEqual(['a', 'b']);
    const first = q.shift()!;
    expect(first.value).toBe('a');
    first.resolve(1);
    q.shift()!.reject(new Error('b failed'));
    await expect(a).resolves.toBe(1);
    await expect(b).rejects.toThrow('b failed');
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
  });

  it('takes by a test and a limit, leaving the others in their order', () => {
    const q = new WaitQueue<number, void>();
    for (const v of [1, 2, 3, 4, 5, 6]) void q.wait(v);
    expect(q.take((v) => v % 2 === 0, 2).map((w) => w.value)).toEqual([2, 4]);
    expect(q.values()).toEqual([1, 3, 5, 6]);
  });

  it('drops a waiter whose signal aborts while it waits, and not once it is taken', async () => {
    const q = new WaitQueue<string, string>();
    const early = new AbortController();
    const late = new AbortController();
    const dropped = q.wait('dropped', early.signal);
    const kept = q.wait('kept', late.signal);
    early.abort(new Error('cancelled while waiting'));
    await expect(dropped).rejects.toThrow('cancelled while waiting');
    expect(q.values()).toEqual(['kept']);
    const taken = q.shift()!;
    late.abort(new Error('too late'));
    taken.resolve('done');
    await expect(kept).resolves.toBe('done');
  });

  it('rejects every waiter at once', async () => {
    const q = new WaitQueue<number, number>();
    const all = [q.wait(1), q.wait(2)];
    q.rejectAll(new Error('closed'));
    for (const p of all) await expect(p).rejects.toThrow('closed');
    expect(q.length).toBe(0);
  });
});
