/** A sample's input as chat messages ready for a model, with its choices listed as `A. …` lines. */
import type { ChatMessage, Sample } from './types.js';

export const choiceLetter = (i: number): string => String.fromCharCode(65 + i);

/** `A. first\nB. second …` */
export function formatChoices(choices: readonly string[]): string {
  return choices.map((c, i) => `${choiceLetter(i)}. ${c}`).join('\n');
}

export function messagesOf(sample: Pick<Sample, 'input' | 'choices'>): ChatMessage[] {
  const messages: ChatMessage[] =
    typeof sample.input === 'string' ? [{ role: 'user', content: sample.input }] : sample.input.map((m) => ({ ...m }));
  if (sample.choices && sample.choices.length > 0) {
    // The choices go under the last user message, as multiple-choice prompts usually show them.
    let i = messages.length - 1;
    while (i > 0 && messages[i]!.role !== 'user') i--;
    const m = messages[i]!;
    messages[i] = { ...m, content: `${m.content}\n\n${formatChoices(sample.choices)}` };
  }
  return messages;
}
