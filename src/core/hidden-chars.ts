/**
 * Characters a reader cannot see but that change what a text shows: C0 and C1 controls (a NUL, a
 * terminal's escape sequence), DEL, and the direction marks, overrides and isolates that make a name
 * read as another (`safe\u202egnp.exe` displays as `safeexe.png`).
 */

/** Whether UTF-16 code unit `c` is one of them; `lines` lets tab, line feed and carriage return pass. */
export function isHiddenChar(c: number, lines = false): boolean {
  if (c === 0x09 || c === 0x0a || c === 0x0d) return !lines;
  return (
    c <= 0x1f || (c >= 0x7f && c <= 0x9f) || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)
  );
}
