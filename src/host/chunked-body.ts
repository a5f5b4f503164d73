/** HTTP/1.1 chunked transfer coding: the body of a chunked message, once all of it has arrived. */

/**
 * Decodes the chunked body that starts at `from` in `buf`. Returns the body and the offset
 * just past it (trailers included), `undefined` while more bytes are needed, or `'bad'` when
 * the framing is malformed.
 */
export function decodeChunked(buf: Buffer, from: number): { body: Buffer; end: number } | undefined | 'bad' {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', at, 'latin1');
    if (eol < 0) return buf.length - at > 1024 ? 'bad' : undefined;
    const sizeText = buf.toString('latin1', at, eol).split(';')[0]!.trim();
    if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) return 'bad';
    const size = Number.parseInt(sizeText, 16);
    at = eol + 2;
    if (size === 0) {
      // Trailers, then an empty line.
      for (;;) {
        const t = buf.indexOf('\r\n', at, 'latin1');
        if (t < 0) return undefined;
        const empty = t === at;
        at = t + 2;
        if (empty) return { body: parts.length === 1 ? parts[0]! : Buffer.concat(parts), end: at };
      }
    }
    if (buf.length < at + size + 2) return undefined;
    if (buf[at + size] !== 0x0d || buf[at + size + 1] !== 0x0a) return 'bad';
    parts.push(buf.subarray(at, at + size));
    at += size + 2;
  }
}
