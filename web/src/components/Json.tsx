/** Pretty-printed JSON, cut short when huge so one big observation cannot freeze the page. */
export function Json({ value, maxChars = 20_000 }: { value: unknown; maxChars?: number }) {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters)`;
  return (
    <pre className="json" tabIndex={0}>
      {text}
    </pre>
  );
}
