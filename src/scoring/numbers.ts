/**
 * Numbers in free text, for the numeric scorer. Understood: an optional minus sign (the ASCII
 * hyphen-minus or a typographic minus: U+2212 "−", U+2012 figure dash, U+FE63 "﹣", U+FF0D "－"),
 * digits with or without thousands separators ("1,234,567": commas only between complete groups
 * of three digits, so "1,2" is two numbers and "3,14159" is 3 and 14159), a decimal part, an
 * exponent ("1e-3"), a fraction of two such numbers ("3/4" → 0.75), a leading currency sign or
 * trailing percent sign is ignored ("$1,200" → 1200, "50%" → 50). A hyphen right after a word
 * or digit is not a sign ("3-4" is 3 and 4); nor are en and em dashes, which are punctuation.
 */

/** Models often write U+2212 MINUS SIGN; the others are minus forms NFKC may leave or keep. */
const MINUS = '[-\u2012\u2212\uFE63\uFF0D]';
// A group of three digits followed by another digit is not a thousands group ("3,14159").
const NUMBER = String.raw`(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE](?:\+|${MINUS})?\d+)?|\.\d+(?:[eE](?:\+|${MINUS})?\d+)?`;
const NUMBER_IN_TEXT = new RegExp(String.raw`(?<![\w.])(${MINUS})?(${NUMBER})(?:\s*\/\s*(${MINUS})?(${NUMBER}))?`, 'gu');
const MINUS_FORMS = new RegExp(MINUS, 'gu');

const parseOne = (sign: string | undefined, digits: string): number => {
  const v = Number(digits.replaceAll(',', '').replace(MINUS_FORMS, '-'));
  return sign ? -v : v;
};

export interface FoundNumber {
  value: number;
  /** The text it was read from. */
  text: string;
}

/** Every number in `text`, in order; a fraction with a zero denominator is skipped. */
export function findNumbers(text: string): FoundNumber[] {
  const out: FoundNumber[] = [];
  for (const m of text.normalize('NFKC').matchAll(NUMBER_IN_TEXT)) {
    let value = parseOne(m[1], m[2]!);
    if (m[4] !== undefined) {
      const den = parseOne(m[3], m[4]);
      if (den === 0) continue;
      value /= den;
    }
    if (Number.isFinite(value)) out.push({ value, text: m[0] });
  }
  return out;
}

/** The last number in `text` (where answers usually state the result), or undefined. */
export function lastNumber(text: string): FoundNumber | undefined {
  const all = findNumbers(text);
  return all[all.length - 1];
}
