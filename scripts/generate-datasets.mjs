// Writes the built-in datasets under datasets/ (arith, mcq, sentiment), deterministically from
// SEED: running it again gives byte-identical files, which are committed.
//   node --import tsx scripts/generate-datasets.mjs [OUT_DIR]   (default: datasets/)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPrng } from '../src/core/prng.ts';

const SEED = 20_261_130;
const ROOT = process.argv[2] ?? join(import.meta.dirname, '..', 'datasets');
const STREAM = { arith: 1, mcq: 2, sentiment: 3 };

const jsonl = (rows) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const csvCell = (v) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
const csv = (columns, rows) =>
  [columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(String(r[c] ?? ''))).join(','))].join('\n') + '\n';
function write(name, file, text) {
  mkdirSync(join(ROOT, name), { recursive: true });
  writeFileSync(join(ROOT, name, file), text);
}
/** Fisher–Yates with the given PRNG. */
function shuffle(rng, arr) {
  const a = [...arr];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
const pad = (n) => String(n).padStart(3, '0');

// ---------------------------------------------------------------- arith
function arith() {
  const rng = createPrng(SEED, STREAM.arith);
  const names = ['Ana', 'Ben', 'Chloe', 'Dev', 'Emma', 'Farid', 'Grace', 'Hugo', 'Iris', 'Jonas', 'Kemi', 'Liam', 'Mei', 'Noah'];
  const items = ['apples', 'marbles', 'stickers', 'books', 'pencils', 'cookies', 'stamps', 'shells'];
  const between = (lo, hi) => lo + rng.int(hi - lo + 1);
  const kinds = {
    addition() {
      const [n, it] = [rng.pick(names), rng.pick(items)];
      const a = between(12, 480);
      const b = between(7, 350);
      return { q: `${n} has ${a} ${it} and is given ${b} more. How many ${it} does ${n} have now?`, a: a + b, s: `${a} + ${b} = ${a + b}` };
    },
    subtraction() {
      const [n, it] = [rng.pick(names), rng.pick(items)];
      const a = between(60, 900);
      const b = between(5, a - 1);
      return { q: `${n} had ${a} ${it} and gave away ${b}. How many ${it} are left?`, a: a - b, s: `${a} - ${b} = ${a - b}` };
    },
    multiplication() {
      const it = rng.pick(items);
      const boxes = between(3, 24);
      const per = between(4, 36);
      return {
        q: `There are ${boxes} boxes with ${per} ${it} in each box. How many ${it} are there in all?`,
        a: boxes * per,
        s: `${boxes} × ${per} = ${boxes * per}`,
      };
    },
    division() {
      const [n, it] = [rng.pick(names), rng.pick(items)];
      const friends = between(2, 12);
      const each = between(3, 40);
      const total = friends * each;
      return {
        q: `${n} shares ${total} ${it} equally among ${friends} friends. How many ${it} does each friend get?`,
        a: each,
        s: `${total} ÷ ${friends} = ${each}`,
      };
    },
    multi_step() {
      const [n, it] = [rng.pick(names), rng.pick(items)];
      const packs = between(2, 9);
      const per = between(5, 20);
      const lost = between(1, packs * per - 1);
      const left = packs * per - lost;
      return {
        q: `${n} buys ${packs} packs of ${it} with ${per} in each pack, then loses ${lost}. How many ${it} does ${n} have left?`,
        a: left,
        s: `${packs} × ${per} - ${lost} = ${left}`,
      };
    },
  };
  const types = Object.keys(kinds);
  const rows = [];
  for (let i = 0; i < 100; i++) {
    const type = types[i % types.length];
    const { q, a, s } = kinds[type]();
    rows.push({ type, q, a, s });
  }
  // Every fifth problem of each type goes to dev: 80 test, 20 dev, every type in both.
  const out = { test: [], dev: [] };
  rows.forEach((r, i) => {
    const split = Math.floor(i / types.length) % 5 === 4 ? 'dev' : 'test';
    out[split].push({ id: `${split}-${pad(out[split].length)}`, input: r.q, target: r.a, metadata: { cluster: r.type, solution: r.s } });
  });
  write('arith', 'test.jsonl', jsonl(out.test));
  write('arith', 'dev.jsonl', jsonl(out.dev));
  write(
    'arith',
    'dataset.json',
    JSON.stringify(
      {
        description:
          'Arithmetic word problems (addition, subtraction, multiplication, exact division, two steps) with exact integer answers; metadata.cluster is the problem type, metadata.solution the worked sum.',
        defaultSplit: 'test',
      },
      null,
      2,
    ) + '\n',
  );
}

// ---------------------------------------------------------------- mcq
function mcq() {
  const rng = createPrng(SEED, STREAM.mcq);
  const between = (lo, hi) => lo + rng.int(hi - lo + 1);
  const isPrime = (n) => {
    if (n < 2) return false;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) return false;
    return true;
  };
  const days = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
  const capitals = [
    ['France', 'Paris'],
    ['Japan', 'Tokyo'],
    ['Italy', 'Rome'],
    ['Egypt', 'Cairo'],
    ['Canada', 'Ottawa'],
    ['Australia', 'Canberra'],
    ['Kenya', 'Nairobi'],
    ['Spain', 'Madrid'],
    ['Germany', 'Berlin'],
    ['Norway', 'Oslo'],
    ['Peru', 'Lima'],
    ['Thailand', 'Bangkok'],
  ];
  const words = [
    'harbor',
    'lantern',
    'meadow',
    'quartz',
    'saddle',
    'timber',
    'violet',
    'walnut',
    'anchor',
    'blossom',
    'cobalt',
    'desert',
    'ember',
    'falcon',
    'glacier',
  ];
  /** Distinct wrong answers from `make` until there are three. */
  const distractors = (right, make) => {
    const out = new Set();
    while (out.size < 3) {
      const w = make();
      if (String(w) !== String(right)) out.add(String(w));
    }
    return [...out];
  };
  const kinds = {
    prime() {
      let p;
      do p = between(11, 97);
      while (!isPrime(p));
      const wrong = distractors(p, () => {
        let c;
        do c = between(10, 99);
        while (isPrime(c));
        return c;
      });
      return { q: 'Which of these numbers is prime?', right: String(p), wrong };
    },
    units() {
      const h = between(2, 12);
      const right = h * 60;
      return {
        q: `How many minutes are there in ${h} hours?`,
        right: String(right),
        wrong: distractors(right, () => h * rng.pick([24, 30, 100, 600, 45, 90])),
      };
    },
    weekdays() {
      const start = rng.int(7);
      const n = between(3, 40);
      const right = days[(start + n) % 7];
      return {
        q: `If today is ${days[start]}, what day of the week will it be in ${n} days?`,
        right,
        wrong: distractors(right, () => rng.pick(days)),
      };
    },
    capitals() {
      const [country, city] = rng.pick(capitals);
      return { q: `What is the capital city of ${country}?`, right: city, wrong: distractors(city, () => rng.pick(capitals)[1]) };
    },
    alphabet() {
      const four = shuffle(rng, words).slice(0, 4);
      const right = [...four].sort()[0];
      return { q: 'Which of these words comes first in alphabetical order?', right, wrong: four.filter((w) => w !== right) };
    },
    fractions() {
      const fr = new Set();
      const list = [];
      while (list.length < 4) {
        const d = between(2, 12);
        const n = between(1, d - 1);
        const v = n / d;
        const key = v.toFixed(6);
        if (fr.has(key)) continue;
        fr.add(key);
        list.push({ t: `${n}/${d}`, v });
      }
      const right = list.reduce((a, b) => (b.v > a.v ? b : a)).t;
      return { q: 'Which of these fractions is the largest?', right, wrong: list.map((x) => x.t).filter((t) => t !== right) };
    },
  };
  const types = Object.keys(kinds);
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const type = types[i % types.length];
    const { q, right, wrong } = kinds[type]();
    const choices = shuffle(rng, [right, ...wrong]);
    const split = Math.floor(i / types.length) % 5 === 4 ? 'dev' : 'test';
    rows.push({
      id: `q${pad(i)}`,
      split,
      input: q,
      choices,
      target: String.fromCharCode(65 + choices.indexOf(right)),
      metadata: { cluster: type },
    });
  }
  write('mcq', 'samples.jsonl', jsonl(rows));
  write(
    'mcq',
    'dataset.json',
    JSON.stringify(
      {
        description:
          'Four-way multiple-choice questions (primes, unit conversion, weekdays, capitals, alphabetical order, fractions); the target is the letter of the right choice; metadata.cluster is the question kind. Splits come from the split field.',
        defaultSplit: 'test',
      },
      null,
      2,
    ) + '\n',
  );
}

// ---------------------------------------------------------------- sentiment
function sentiment() {
  const rng = createPrng(SEED, STREAM.sentiment);
  const domains = {
    restaurant: {
      things: ['the soup', 'the pasta', 'the curry', 'the dessert', 'the pizza'],
      pos: ['was delicious', 'was outstanding', 'made our evening'],
      neg: ['was cold and bland', 'was a huge disappointment', 'ruined the evening'],
      neu: ['was served at seven', 'came with a side salad', 'is listed on the lunch menu'],
    },
    product: {
      things: ['this phone', 'the charger', 'the headphones', 'this blender', 'the keyboard'],
      pos: ['works perfectly', 'is worth every penny', 'exceeded my expectations'],
      neg: ['broke after two days', 'is a waste of money', 'stopped working right away'],
      neu: ['comes in a grey box', 'weighs about 300 grams', 'ships with a manual'],
    },
    movie: {
      things: ['the film', 'the ending', 'the soundtrack', 'the lead actor', 'the sequel'],
      pos: ['was brilliant', 'moved me to tears', 'was a joy to watch'],
      neg: ['was painfully boring', 'made no sense at all', 'was the worst I have seen'],
      neu: ['runs for two hours', 'was released in spring', 'was filmed in Canada'],
    },
    travel: {
      things: ['the hotel', 'the flight', 'the tour guide', 'the beach', 'the train ride'],
      pos: ['was absolutely lovely', 'made the trip wonderful', 'was better than we hoped'],
      neg: ['was dirty and noisy', 'was delayed for hours and miserable', 'was rude and unhelpful'],
      neu: ['is ten minutes from the station', 'left at nine in the morning', 'is open from May to October'],
    },
  };
  const names = Object.keys(domains);
  const labels = ['positive', 'negative', 'neutral'];
  const key = { positive: 'pos', negative: 'neg', neutral: 'neu' };
  const used = new Set();
  const rows = [];
  for (let i = 0; i < 60; i++) {
    const label = labels[i % 3];
    const cluster = names[Math.floor(i / 3) % names.length];
    const d = domains[cluster];
    let text;
    do {
      const thing = rng.pick(d.things);
      text = `${thing[0].toUpperCase()}${thing.slice(1)} ${rng.pick(d[key[label]])}.`;
    } while (used.has(text));
    used.add(text);
    rows.push({ label, cluster, text });
  }
  const out = { test: [], dev: [] };
  rows.forEach((r, i) => {
    const split = Math.floor(i / 12) % 5 === 4 ? 'dev' : 'test';
    out[split].push({ id: `${split}-${pad(out[split].length)}`, input: r.text, target: r.label, cluster: r.cluster });
  });
  const cols = ['id', 'input', 'target', 'cluster'];
  write('sentiment', 'test.csv', csv(cols, out.test));
  write('sentiment', 'dev.csv', csv(cols, out.dev));
  write(
    'sentiment',
    'dataset.json',
    JSON.stringify(
      {
        description:
          'Short review sentences labelled positive, negative or neutral (restaurants, products, movies, travel; metadata.cluster is the domain).',
        labels,
        defaultSplit: 'test',
      },
      null,
      2,
    ) + '\n',
  );
}

arith();
mcq();
sentiment();
console.log(`wrote ${ROOT}/{arith,mcq,sentiment}`);
