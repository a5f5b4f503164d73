/**
 * A small fully connected policy: tanh hidden layers, linear output, argmax action. The
 * forward pass handles one row at a time in a fixed order of float operations, so a row's
 * result never depends on the rows computed beside it.
 */

export const WEIGHTS_FORMAT = 'policy_mlp/v1';

/** The JSON shape of `weights.json`. */
export interface MlpWeights {
  format: typeof WEIGHTS_FORMAT;
  /** Layer widths, input first, e.g. `[4, 16, 16, 2]`. */
  layers: number[];
  activation: 'tanh';
  /** Multiplies each input component before the first layer. */
  inputScale: number[];
  /** Per layer, row-major `[out][in]` flattened. */
  weights: number[][];
  /** Per layer, one per output. */
  biases: number[][];
  /** How the weights were made (free-form, for people). */
  training?: Record<string, unknown>;
}

/** The weights laid out in one buffer for the forward pass. */
export interface PackedMlp {
  layers: readonly number[];
  inputScale: Float64Array;
  /** Per layer: `[out][in]` weights followed by `out` biases. */
  params: Float64Array;
  /** Start of each layer's block in `params`. */
  offsets: readonly number[];
}

export function parameterCount(layers: readonly number[]): number {
  let n = 0;
  for (let l = 1; l < layers.length; l++) n += layers[l - 1]! * layers[l]! + layers[l]!;
  return n;
}

/** Checks a parsed weights file, naming the first thing wrong with it. */
export function checkWeights(w: unknown, source = 'weights'): MlpWeights {
  const fail = (what: string): never => {
    throw new Error(`${source}: ${what}`);
  };
  if (typeof w !== 'object' || w === null) return fail('not a JSON object');
  const o = w as Partial<MlpWeights>;
  if (o.format !== WEIGHTS_FORMAT) fail(`format is ${JSON.stringify(o.format)}, expected ${JSON.stringify(WEIGHTS_FORMAT)}`);
  if (o.activation !== 'tanh') fail(`activation is ${JSON.stringify(o.activation)}, expected "tanh"`);
  const layers = o.layers;
  if (!Array.isArray(layers) || layers.length < 2 || !layers.every((n) => Number.isInteger(n) && n > 0)) {
    return fail(`layers must list at least two positive widths, got ${JSON.stringify(layers)}`);
  }
  const finite = (a: unknown, len: number, what: string): void => {
    if (!Array.isArray(a) || a.length !== len || !a.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      fail(`${what} must be ${len} finite numbers`);
    }
  };
  finite(o.inputScale, layers[0]!, 'inputScale');
  if (!Array.isArray(o.weights) || o.weights.length !== layers.length - 1) fail(`weights must hold ${layers.length - 1} layers`);
  if (!Array.isArray(o.biases) || o.biases.length !== layers.length - 1) fail(`biases must hold ${layers.length - 1} layers`);
  for (let l = 1; l < layers.length; l++) {
    finite(o.weights![l - 1], layers[l - 1]! * layers[l]!, `weights[${l - 1}]`);
    finite(o.biases![l - 1], layers[l]!, `biases[${l - 1}]`);
  }
  return o as MlpWeights;
}

export function packWeights(w: MlpWeights): PackedMlp {
  const params = new Float64Array(parameterCount(w.layers));
  const offsets: number[] = [];
  let o = 0;
  for (let l = 1; l < w.layers.length; l++) {
    offsets.push(o);
    params.set(w.weights[l - 1]!, o);
    o += w.weights[l - 1]!.length;
    params.set(w.biases[l - 1]!, o);
    o += w.biases[l - 1]!.length;
  }
  return { layers: w.layers, inputScale: Float64Array.from(w.inputScale), params, offsets };
}

/** Builds MlpWeights from a flat parameter vector in the packed order (used by training). */
export function unflatten(layers: readonly number[], inputScale: readonly number[], flat: ArrayLike<number>): MlpWeights {
  const weights: number[][] = [];
  const biases: number[][] = [];
  let o = 0;
  for (let l = 1; l < layers.length; l++) {
    const nw = layers[l - 1]! * layers[l]!;
    weights.push(Array.from({ length: nw }, (_, i) => flat[o + i]!));
    o += nw;
    biases.push(Array.from({ length: layers[l]! }, (_, i) => flat[o + i]!));
    o += layers[l]!;
  }
  return { format: WEIGHTS_FORMAT, layers: [...layers], activation: 'tanh', inputScale: [...inputScale], weights, biases };
}

/** Output-layer values (logits) for one input row. */
export function forward(net: PackedMlp, input: readonly number[]): Float64Array {
  const width0 = net.layers[0]!;
  if (input.length !== width0) throw new Error(`policy input has ${input.length} values, the network takes ${width0}`);
  let x = new Float64Array(width0);
  for (let i = 0; i < width0; i++) {
    const v = input[i]!;
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new Error(`policy input ${i} is ${JSON.stringify(v)}, expected a finite number`);
    x[i] = v * net.inputScale[i]!;
  }
  const last = net.layers.length - 1;
  for (let l = 1; l <= last; l++) {
    const nIn = net.layers[l - 1]!;
    const nOut = net.layers[l]!;
    const w = net.offsets[l - 1]!;
    const b = w + nIn * nOut;
    const y = new Float64Array(nOut);
    for (let j = 0; j < nOut; j++) {
      let acc = net.params[b + j]!;
      for (let i = 0; i < nIn; i++) acc += net.params[w + j * nIn + i]! * x[i]!;
      y[j] = l === last ? acc : Math.tanh(acc);
    }
    x = y;
  }
  return x;
}

/** Index of the largest value; the lowest index wins a tie. */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
