#!/usr/bin/env node
// calculator tool: reads {"expression": "..."} as JSON on stdin, prints the value. A small
// recursive-descent parser (never eval): numbers, + - * / % ^ **, parentheses, unary minus,
// the constants pi and e, and the functions listed in FUNCTIONS.

const FUNCTIONS = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  floor: Math.floor,
  ceil: Math.ceil,
  round: Math.round,
  trunc: Math.trunc,
  exp: Math.exp,
  ln: Math.log,
  log: Math.log10,
  log2: Math.log2,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  min: Math.min,
  max: Math.max,
  pow: Math.pow,
};
const CONSTANTS = { pi: Math.PI, e: Math.E };
const MAX_LENGTH = 1000;

function tokenize(src) {
  const tokens = [];
  const re = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|(\*\*|[-+*/%^(),])|([A-Za-z_][A-Za-z0-9_]*))/y;
  let i = 0;
  while (i < src.length) {
    if (/^\s*$/.test(src.slice(i))) break;
    re.lastIndex = i;
    const m = re.exec(src);
    if (!m) throw new Error(`unexpected character ${JSON.stringify(src.slice(i).trim()[0])} at position ${i + 1}`);
    if (m[1] !== undefined) tokens.push({ kind: 'num', value: Number(m[1].replace(/_/g, '')) });
    else if (m[2] !== undefined) tokens.push({ kind: 'op', value: m[2] === '**' ? '^' : m[2] });
    else tokens.push({ kind: 'name', value: m[3] });
    i = re.lastIndex;
  }
  return tokens;
}

function parse(tokens) {
  let pos = 0;
  const peek = () => tokens[pos];
  const isOp = (v) => peek()?.kind === 'op' && peek().value === v;
  const expect = (v) => {
    if (!isOp(v)) throw new Error(`expected "${v}"${peek() ? ` before "${peek().value}"` : ' at the end'}`);
    pos++;
  };
  // expr := term (('+'|'-') term)*
  function expr() {
    let v = term();
    while (isOp('+') || isOp('-')) v = tokens[pos++].value === '+' ? v + term() : v - term();
    return v;
  }
  // term := unary (('*'|'/'|'%') unary)*
  function term() {
    let v = unary();
    while (isOp('*') || isOp('/') || isOp('%')) {
      const op = tokens[pos++].value;
      const r = unary();
      if ((op === '/' || op === '%') && r === 0) throw new Error('division by zero');
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  }
  // unary := ('-'|'+') unary | power
  function unary() {
    if (isOp('-')) {
      pos++;
      return -unary();
    }
    if (isOp('+')) {
      pos++;
      return unary();
    }
    return power();
  }
  // power := atom ('^' unary)?   (right-associative)
  function power() {
    const base = atom();
    if (isOp('^')) {
      pos++;
      return base ** unary();
    }
    return base;
  }
  function atom() {
    const t = peek();
    if (!t) throw new Error('unexpected end of expression');
    if (t.kind === 'num') {
      pos++;
      return t.value;
    }
    if (t.kind === 'name') {
      pos++;
      const name = t.value.toLowerCase();
      if (isOp('(')) {
        const fn = FUNCTIONS[name];
        if (!fn) throw new Error(`unknown function "${t.value}" (known: ${Object.keys(FUNCTIONS).join(', ')})`);
        pos++;
        const args = [expr()];
        while (isOp(',')) {
          pos++;
          args.push(expr());
        }
        expect(')');
        return fn(...args);
      }
      if (Object.hasOwn(CONSTANTS, name)) return CONSTANTS[name];
      throw new Error(`unknown name "${t.value}"`);
    }
    if (isOp('(')) {
      pos++;
      const v = expr();
      expect(')');
      return v;
    }
    throw new Error(`unexpected "${t.value}"`);
  }
  const v = expr();
  if (pos < tokens.length) throw new Error(`unexpected "${tokens[pos].value}"`);
  return v;
}

/** Integers print exactly; other values with 12 significant digits, trailing zeros dropped. */
function format(v) {
  if (!Number.isFinite(v)) throw new Error(`the result is not a finite number (${v})`);
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 53) return String(v);
  return String(Number(v.toPrecision(12)));
}

async function main() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  let args;
  try {
    args = JSON.parse(text || '{}');
  } catch {
    throw new Error('arguments must be a JSON object');
  }
  const expression = args?.expression;
  if (typeof expression !== 'string' || expression.trim() === '') throw new Error('argument "expression" must be a non-empty string');
  if (expression.length > MAX_LENGTH) throw new Error(`expression longer than ${MAX_LENGTH} characters`);
  process.stdout.write(`${format(parse(tokenize(expression)))}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
