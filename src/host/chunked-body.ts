/**
 * HTTP/1.1 chunked transfer coding, decoded as the bytes arrive: each byte is looked at once
 * and the body is joined once at the end, so a large body costs time in proportion to its size
 * (re-scanning everything received on every read made it quadratic).
 */

/** Longest chunk-size line (with extensions) accepted. */
const MAX_SIZE_LINE = 1024;
/** Most bytes of trailer fields accepted after the last chunk. */
const MAX_TRAILERS = 64 * 1024;

/** Reading a chunk-size line, a chunk's data, the CR and LF after it, a trailer line; or done. */
type State = 'size' | 'data' | 'cr' | 'lf' | 'trailer' | 'done';

export class ChunkedDecoder {
  #state: State = 'size';
  /** The line being read (chunk size or trailer), latin1, without its CRLF yet. */
  #line = '';
  #trailerBytes = 0;
  /** Bytes of the current chunk's data still to come. */
  #remaining = 0;
  #parts: Buffer[] = [];
  #size = 0;

  /** Body bytes decoded so far. */
  get size(): number {
    return this.#size;
  }

  /**
   * Feeds the next bytes of the message. Returns the offset in `chunk` just past the body
   * (trailers included) once it is complete, `undefined` while more bytes are needed, or `'bad'`
   * when the framing is malformed. The parts kept are views of `chunk`, not copies.
   */
  push(chunk: Buffer): number | undefined | 'bad' {
    let at = 0;
    while (at < chunk.length) {
      switch (this.#state) {
        case 'data': {
          const take = Math.min(this.#remaining, chunk.length - at);
          this.#parts.push(chunk.subarray(at, at + take));
          this.#size += take;
          this.#remaining -= take;
          at += take;
          if (this.#remaining === 0) this.#state = 'cr';
          break;
        }
        case 'cr':
          if (chunk[at++] !== 0x0d) return 'bad';
          this.#state = 'lf';
          break;
        case 'lf':
          if (chunk[at++] !== 0x0a) return 'bad';
          this.#state = 'size';
          break;
        case 'size':
        case 'trailer': {
          const lf = chunk.indexOf(0x0a, at);
          const end = lf < 0 ? chunk.length : lf;
          if (this.#state === 'size' ? this.#line.length + end - at > MAX_SIZE_LINE : this.#trailerBytes + end - at > MAX_TRAILERS)
            return 'bad';
          this.#line += chunk.toString('latin1', at, end);
          if (this.#state === 'trailer') this.#trailerBytes += end - at;
          if (lf < 0) return undefined;
          at = lf + 1;
          const line = this.#line;
          this.#line = '';
          if (!line.endsWith('\r')) return 'bad';
          if (this.#state === 'trailer') {
            if (line.length === 1) {
              this.#state = 'done';
              return at;
            }
            break;
          }
          const sizeText = line.slice(0, -1).split(';')[0]!.trim();
          if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) return 'bad';
          this.#remaining = Number.parseInt(sizeText, 16);
          this.#state = this.#remaining === 0 ? 'trailer' : 'data';
          break;
        }
        case 'done':
          return at;
      }
    }
    return this.#state === 'done' ? at : undefined;
  }

  /** The decoded body, joined once; call after `push` returned an offset. */
  body(): Buffer {
    return joinParts(this.#parts, this.#size);
  }
}

/** Joins `parts` holding `bytes` bytes in all, copying only when there is more than one. */
export function joinParts(parts: Buffer[], bytes: number): Buffer {
  if (parts.length === 1) return parts[0]!;
  return parts.length === 0 ? Buffer.alloc(0) : Buffer.concat(parts, bytes);
}
