/**
 * Numbers in free text, for the numeric scorer. Understood: an optional minus sign, digits
 * with or without thousands separators ("1,234,567": commas only between groups of exactly
 * three digits, so "1,2" is two numbers), a decimal part, an exponent ("1e-3"), a fraction
 * of two such numbers ("3/4" → 0.75), a leading currency sign or trailing percent sign is
 * ignored ("$1,200" → 1200, "50%" → 50). A hyphen right after a word or digit is not a sign
 * ("3-4" is 3 and 4).
 */

const NUMBER = String.raw`(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?`;
const NUMBER_IN_TEXT = new RegExp(String.raw`(?<![\w.])(-)?(${NUMBER})(?:\s*\/\s*(-)?(${NUMBER}))?`, 'gu');

const parseOne = (sign: string | undefined, digits: string): number => {
  const v = Number(digits.replaceAll(',', ''));
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
