/**
 * Text normalisation shared by the string scorers. `normalizeAnswer`: Unicode NFKC, trim,
 * case-fold, whitespace runs to one space, trailing punctuation stripped. `squadTokens`: the
 * SQuAD evaluation script's normalisation (lower case, punctuation and the articles a/an/the
 * removed) split on whitespace.
 */

const TRAILING_PUNCTUATION = /[\s.,;:!?。，！？]+$/u;

export function normalizeAnswer(text: string): string {
  return text.normalize('NFKC').trim().toLowerCase().replace(/\s+/gu, ' ').replace(TRAILING_PUNCTUATION, '');
}

export function squadTokens(text: string): string[] {
  const s = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, '')
    .replace(/\b(a|an|the)\b/gu, ' ');
  return s.split(/\s+/u).filter((t) => t.length > 0);
}
