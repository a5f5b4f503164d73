import { describe, expect, it } from 'vitest';
import { ChunkedDecoder } from '../../src/host/chunked-body.js';

const encoded = Buffer.from('5;ext=1\r\nhello\r\n1\r\n \r\nC\r\nworld, again\r\n0\r\nX-Trailer: t\r\n\r\nNEXT');
const bodyEnd = encoded.length - 'NEXT'.length;

/** Feeds `bytes` in pieces of `size`; the offset past the body in the whole input, or what push answered. */
function feed(bytes: Buffer, size: number): { d: ChunkedDecoder; end: number | undefined | 'bad' } {
  const d = new ChunkedDecoder();
  for (let at = 0; at < bytes.length; at += size) {
    const r = d.push(bytes.subarray(at, at + size));
    if (r === 'bad') return { d, end: r };
    if (r !== undefined) return { d, end: at + r };
  }
  return { d, end: undefined };
}

describe('ChunkedDecoder', () => {
  it('decodes a body split at every byte, with extensions and trailers, and says where it ended', () => {
    for (const size of [1, 2, 3, 7, encoded.length]) {
      const { d, end } = feed(encoded, size);
      expect(end, `pieces of ${size}`).toBe(bodyEnd);
      expect(d.body().toString('latin1')).toBe('hello world, again');
      expect(d.size).toBe(18);
    }
  });

  it('waits for the rest of an unfinished body, and calls malformed framing bad', () => {
    expect(feed(encoded.subarray(0, bodyEnd - 1), 4).end).toBeUndefined();
    expect(feed(Buffer.from('zz\r\n'), 1).end).toBe('bad');
    expect(feed(Buffer.from('5\r\nhelloXX0\r\n\r\n'), 1).end).toBe('bad');
    expect(feed(Buffer.from('5\nhello\r\n0\r\n\r\n'), 1).end).toBe('bad');
    expect(feed(Buffer.alloc(2000, 0x31), 100).end).toBe('bad');
  });
});
