import { describe, expect, it } from 'vitest';
import {
  type ShownMessage,
  TranscriptCache,
  type TranscriptEntry,
} from '../src/chats/detail/transcriptCache';

/** The detail's transcript cache stays within its budget, least recently used out first (ADR-051). */
function entry(branchId: string, bytes: number): TranscriptEntry {
  const message: ShownMessage = {
    storedId: `${branchId}-1`,
    originId: `${branchId}-1`,
    role: 'user',
    createdAt: new Date(0),
    mark: 1n,
    bytes,
  };
  return { branchId, memoryThreadId: `memory-${branchId}`, messages: [message], marks: 1n, bytes };
}

describe('TranscriptCache', () => {
  it('drops the least recently used entries past its budget', () => {
    const cache = new TranscriptCache(1_000);
    cache.set(entry('a', 400));
    cache.set(entry('b', 400));
    expect(cache.get('a')?.branchId).toBe('a');
    cache.set(entry('c', 400));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.branchId).toBe('a');
    expect(cache.get('c')?.branchId).toBe('c');
    expect(cache.bytes).toBe(800);
  });

  it('keeps nothing bigger than its budget, nothing with a budget of 0, and replaces a branch whole', () => {
    const cache = new TranscriptCache(1_000);
    cache.set(entry('big', 1_001));
    expect(cache.size).toBe(0);
    cache.set(entry('a', 300));
    cache.set(entry('a', 500));
    expect(cache.size).toBe(1);
    expect(cache.bytes).toBe(500);
    const off = new TranscriptCache(0);
    off.set(entry('a', 1));
    expect(off.size).toBe(0);
  });

  it('forgets an entry asked for with another memory thread', () => {
    const cache = new TranscriptCache(1_000);
    cache.set(entry('a', 100));
    expect(cache.get('a', 'memory-other')).toBeUndefined();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });
});
