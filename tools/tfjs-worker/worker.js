#!/usr/bin/env node
// memo's TensorFlow.js worker. It builds Keras models (the JSON of Keras' model.to_json()) with
// tfjs-layers on one tfjs backend (cpu or wasm), sets the weights memo drew, runs the inputs and
// answers with the outputs. It reads requests from fd 3 and writes results to fd 4, one at a
// time, until fd 3 closes. Each frame is a little-endian u64 length and a payload:
//
//   request  str model JSON, u8 mode (0: the model's outputs by model.predict, 1: every layer's
//            output, 2: every layer's output with each layer fed the given tensors),
//            u32 weights, each: str layer, str weight, tensor
//            u32 inputs (the model's input layers in order), each: tensor
//            u32 layers, each: u32 rank, i64 dims (its output shape as Keras infers it; -1: batch)
//            mode 2: u32 tensors (one per layer, in the JSON's order), each: tensor
//            mode 3 (a bug's reproducer, reproducer.js; memo sends it only to workers that write
//            one): str folder, str file stem, str title, u32 checks, each: u32 node, tensor
//            expected, f64 bound; the answer's message says whether the script written shows the fault
//   result   u8 status (0 ok, 1 error, 2 declined: a layer or setting tfjs lacks, 3 a layer whose
//            output shape tfjs infers otherwise than Keras, 4 an error of model.predict where
//            every layer applied alone runs), f64 milliseconds
//            (building, weights and the run), str message, str layer (the failing one, or ""),
//            u32 outputs, each: tensor
//
// (str: u32 length and UTF-8 bytes; tensor: u32 rank, i64 dims, float32 data.) Every tensor a
// request makes is disposed before the answer. Usage: node worker.js [--backend cpu|wasm]
'use strict';
const { Reader, dimsHeader, answer, serveFrames } = require('../frames.js');
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

const backend = (() => {
  const i = process.argv.indexOf('--backend');
  return i >= 0 ? process.argv[i + 1] : 'cpu';
})();

// What tfjs needs besides its packages to run memo's models (layers.js): the chained tensor
// methods its CommonJS build leaves out, and memo's layers that Keras has no class for.
const { addChainedOps, registerCustomLayers } = require('./layers.js');
const { readRequest } = require('../reproducing.js');
const reproducer = require('./reproducer.js');
const version = require('@tensorflow/tfjs-core/package.json').version;
addChainedOps(tf);
let customClasses = new Set();

// Keras' JSON as tfjs should read it for inference. Initializers become Zeros: memo sets every
// weight, and drawing them (an Orthogonal one of a large kernel) would only cost time, or fail
// where Keras' own would (Identity of a kernel). Regularizers and constraints act in training
// only, and go: tfjs declines a layer with an activity regularizer, and applies a constraint
// when weights are set (Keras applies it after each training step), which would change the very
// weights memo set.
function tfjsDialect(config, cls) {
  // Keras 2's recurrent_activation default is sigmoid, tfjs' hard_sigmoid: a config that leaves
  // it out (a Bidirectional's LSTM) means Keras'.
  if (['LSTM', 'GRU', 'SimpleRNN', 'ConvLSTM2D'].includes(cls) && !('recurrent_activation' in config) && cls !== 'SimpleRNN') config.recurrent_activation = 'sigmoid';
  for (const [key, v] of Object.entries(config)) {
    if (key.endsWith('_initializer') && v) config[key] = { class_name: 'Zeros', config: {} };
    else if (key.endsWith('_regularizer') || key.endsWith('_constraint')) config[key] = null;
    else if (key === 'layer' && v && v.config) tfjsDialect(v.config, v.class_name);  // a wrapper's layer
  }
}

// The Keras option a layer sets that tfjs-layers (the Keras 2 API) does not have, and would ignore
// without a word: a decline, not a difference of shapes. (A documented option tfjs ignores, such as
// a transposed convolution's dilationRate, stays a bug.)
function lacking(c, cls) {
  if (/^Global(Average|Max)Pooling[123]D$/.test(cls) && c.keepdims) return 'keepdims';
  if (/Pooling1D$/.test(cls) && c.data_format === 'channels_first') return 'data_format for 1-D pooling';
  if (/Conv[23]DTranspose$/.test(cls) && c.output_padding != null) return 'output_padding';
  // MEMO's pool draws shared_axes -1 and -2, which Keras reads from the end (param_shape[axis - 1])
  // and tfjs-layers' same line in JavaScript not at all.
  if (cls === 'PReLU' && [].concat(c.shared_axes ?? []).some((a) => a < 0)) return 'negative shared_axes';
  return '';
}

// The model as tfjs should build it: in tfjs' dialect, with every layer no other reads among its
// outputs (a Functional model holds only the layers its outputs need, and memo's models may
// have others), and with the batch size fixed where a stateful RNN needs it. Returns which of
// the outputs are the model's own.
function graphOf(spec, inputs) {
  const layers = spec.config.layers;
  for (const l of layers) {
    tfjsDialect(l.config, l.class_name);
    const lacks = lacking(l.config, l.class_name);
    if (lacks) throw new Declined(`layer ${l.name} (${l.class_name}): tfjs-layers has no ${lacks}`, l.name);
  }
  const read = new Set();
  for (const l of layers) for (const e of l.inbound_nodes[0] || []) read.add(e[0]);
  const outputs = spec.config.output_layers;
  const own = outputs.length;
  for (const l of layers) {
    if (l.class_name !== 'InputLayer' && !read.has(l.name) && !outputs.some((o) => o[0] === l.name)) outputs.push([l.name, 0, 0]);
  }
  const stateful = (c) => c.stateful || (c.layer && c.layer.config && c.layer.config.stateful);
  if (layers.some((l) => stateful(l.config)) && inputs.length) {
    for (const l of layers) if (l.class_name === 'InputLayer') l.config.batch_input_shape[0] = inputs[0].dims[0];
  }
  return [...Array(own).keys()];
}

function decode(frame) {
  const r = new Reader(frame);
  const json = r.str();
  const mode = r.u8();
  const weights = new Map();  // layer -> Map(weight name -> {dims, data})
  for (let n = r.u32(); n > 0; --n) {
    const layer = r.str(), name = r.str();
    if (!weights.has(layer)) weights.set(layer, new Map());
    weights.get(layer).set(name, r.tensor());
  }
  const inputs = [];
  for (let n = r.u32(); n > 0; --n) inputs.push(r.tensor());
  const shapes = [];
  for (let n = r.u32(); n > 0; --n) {
    const dims = [];
    for (let k = r.u32(); k > 0; --k) dims.push(r.i64());
    shapes.push(dims);
  }
  const forced = [];
  if (mode === 2) for (let n = r.u32(); n > 0; --n) forced.push(r.tensor());
  const repro = mode === 3 ? readRequest(r) : null;
  return { json, mode, weights, inputs, shapes, forced, repro };
}

function encode(status, ms, message, layer, outputs) {
  const text = Buffer.from(message, 'utf8'), where = Buffer.from(layer, 'utf8');
  const head = Buffer.alloc(1 + 8 + 4 + text.length + 4 + where.length + 4);
  let at = head.writeUInt8(status, 0);
  at = head.writeDoubleLE(ms, at);
  at = head.writeUInt32LE(text.length, at); at += text.copy(head, at);
  at = head.writeUInt32LE(where.length, at); at += where.copy(head, at);
  head.writeUInt32LE(outputs.length, at);
  const parts = [head];
  for (const t of outputs) {
    parts.push(dimsHeader(t.dims));
    parts.push(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  }
  return parts;
}

// The weight memo drew under a name, for a tfjs variable: Keras names weights by their last path
// segment ("conv2d_1/kernel"), and a Bidirectional layer's by its direction too
// ("bidirectional/forward_lstm/kernel" is memo's "forward_kernel").
function memoName(variable) {
  const path = variable.originalName.split('/');
  const last = path[path.length - 1];
  for (const side of ['forward', 'backward']) if (path.some((p) => p.startsWith(side + '_'))) return side + '_' + last;
  return last;
}

function setWeights(model, weights) {
  for (const layer of model.layers) {
    const given = weights.get(layer.name);
    const vars = layer.weights;
    if (vars.length === 0) continue;
    if (!given) throw new Declined(`layer ${layer.name}: tfjs has ${vars.length} weights, memo none`, layer.name);
    const values = vars.map((v) => {
      const w = given.get(memoName(v));
      if (!w) throw new Declined(`layer ${layer.name}: tfjs has a weight ${v.originalName} that memo does not (memo has ${[...given.keys()].join(', ')})`, layer.name);
      return tf.tensor(w.data, w.dims, 'float32');
    });
    if (values.length !== given.size) {
      values.forEach((v) => v.dispose());
      throw new Declined(`layer ${layer.name}: tfjs has ${vars.length} weights, memo ${given.size}`, layer.name);
    }
    layer.setWeights(values);
    values.forEach((v) => v.dispose());
  }
}

// The first layer whose output shape tfjs infers otherwise than Keras (memo's shapes), as a
// verdict of its own: a layer that ignores a parameter (say keepdims) shows here, not later as
// some other layer's error.
function checkShapes(model, spec, shapes) {
  spec.config.layers.forEach((l, i) => {
    if (l.class_name === 'InputLayer' || !shapes[i]) return;
    let got = model.getLayer(l.name).outputShape;
    if (Array.isArray(got[0])) got = got[0];
    const want = shapes[i].map((d) => (d < 0 ? null : d));
    if (got.length !== want.length || got.some((d, k) => k > 0 && d !== want[k])) {
      throw new Misshapen(`layer ${l.name} (${l.class_name}): tfjs infers the output shape [${got}], Keras [${want}]`, l.name);
    }
  });
}

class Misshapen extends Error {
  constructor(message, layer) { super(message); this.layer = layer; }
}
class Declined extends Error {
  constructor(message, layer) { super(message); this.layer = layer || ''; }
}
class GraphFailed extends Error {
  constructor(cause) { super(cause && cause.message ? cause.message : String(cause)); this.cause = cause; }
}
class Failed extends Error {
  constructor(cause, layer) { super(cause && cause.message ? cause.message : String(cause)); this.cause = cause; this.layer = layer; }
}

// What tfjs says when it lacks something, rather than when it fails.
function declines(e) {
  const m = String(e && e.message ? e.message : e);
  return e instanceof Declined || (e && e.name === 'NotImplementedError') || /Unknown layer|is not supported|not yet supported|not implemented|does not support|Unsupported input rank|Unknown activation|expected (min_|max_)?ndim=/.test(m);
}

// The layer tfjs would not build, for a model it would not build, and why: the class it does not
// know, else the first layer that fails built alone, fed inputs of the shapes memo infers, or
// whose output shape alone differs from memo's (the layers after it failed on that shape). The
// campaign learns a decline by its layer, and keeps to models every library runs.
async function culprit(spec, shapes, error) {
  const layers = spec.config.layers;
  const unknown = /Unknown layer: (\w+)/.exec(String(error && error.message));
  if (unknown) return { layer: (layers.find((l) => l.class_name === unknown[1]) || {}).name || '', error };
  const index = new Map(layers.map((l, i) => [l.name, i]));
  for (const l of layers) {
    if (l.class_name === 'InputLayer') continue;
    const from = (l.inbound_nodes[0] || []).map((e) => e[0]);
    const inputs = [...new Set(from)].map((name) => ({
      class_name: 'InputLayer',
      name,
      config: { name, batch_input_shape: shapes[index.get(name)].map((d) => (d < 0 ? null : d)), dtype: 'float32' },
      inbound_nodes: [],
    }));
    const alone = {
      class_name: 'Functional',
      config: { name: 'alone', layers: [...inputs, l], input_layers: inputs.map((i) => [i.name, 0, 0]), output_layers: [[l.name, 0, 0]] },
    };
    let built = null;
    try {
      built = await tfl.models.modelFromJSON(alone);
    } catch (e) {
      return { layer: l.name, error: e };
    }
    try {
      checkShapes(built, alone, [...inputs.map((i) => shapes[index.get(i.name)]), shapes[index.get(l.name)]]);
    } catch (e) {
      return { layer: l.name, error: e };
    } finally {
      built.dispose();
    }
  }
  return { layer: '', error };
}

function toTensor(t) { return tf.tensor(t.data, t.dims, 'float32'); }

async function fetch(tensors) {
  const out = [];
  for (const t of tensors) out.push({ dims: t.shape, data: await t.data() });
  return out;
}

// Every layer applied to concrete tensors in the JSON's order (memo's node order), each reading
// its producers' outputs, or with `forced` the given tensors.
function eager(model, spec, inputs, forced) {
  const layers = spec.config.layers;
  const index = new Map(layers.map((l, i) => [l.name, i]));
  const inputNames = spec.config.input_layers.map((e) => e[0]);
  const values = [];
  for (let i = 0; i < layers.length; ++i) {
    const l = layers[i];
    if (l.class_name === 'InputLayer') {
      values.push(tf.keep(toTensor(inputs[inputNames.indexOf(l.name)])));
      continue;
    }
    const from = (l.inbound_nodes[0] || []).map((e) => index.get(e[0]));
    const args = from.map((k) => (forced.length ? forced[k] : values[k]));
    try {
      const out = model.getLayer(l.name).apply(args.length === 1 ? args[0] : args);
      values.push(tf.keep(Array.isArray(out) ? out[0] : out));
    } catch (e) {
      values.forEach((v) => v.dispose());
      throw new Failed(e, l.name);
    }
  }
  return values;
}

async function serve(frame) {
  const start = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - start) / 1e6;
  let model = null;
  let outputs = [];
  const made = [];
  try {
    const q = decode(frame);
    const spec = JSON.parse(q.json);
    const wanted = graphOf(spec, q.inputs);
    try {
      model = await tfl.models.modelFromJSON(spec);
    } catch (e) {
      const { layer, error } = await culprit(spec, q.shapes, e);
      if (error instanceof Misshapen) throw error;
      throw declines(error) ? new Declined(error.message, layer) : new Failed(error, layer);
    }
    if (q.mode !== 3) checkShapes(model, spec, q.shapes);  // a reproducer shows a misshapen layer itself
    setWeights(model, q.weights);
    if (q.mode === 3) {  // the bug's reproducer (reproducer.js), written and run once
      const { directory, stem, title, checks } = q.repro;
      const layers = spec.config.layers;
      // A crash's script returns every output graphOf gave the model: a layer no other reads may be
      // what makes it fail.
      const outputs = checks.length ? checks.map((c) => ({ name: layers[c.node].name, expected: c.expected, bound: c.bound }))
        : spec.config.output_layers.map((o) => ({ name: o[0] }));
      const script = await reproducer.write(directory, stem, title, spec, model, q.inputs, outputs, backend, version, customClasses);
      answer(encode(0, ms(), reproducer.command(script), '', []));
      model.dispose();
      return;
    }
    if (q.mode === 0) {
      const feeds = q.inputs.map(toTensor);
      made.push(...feeds);
      try {
        const y = model.predict(feeds.length === 1 ? feeds[0] : feeds);
        const all = Array.isArray(y) ? y : [y];
        outputs = wanted.map((k) => all[k]);
        all.forEach((t, k) => { if (!wanted.includes(k)) t.dispose(); });
      } catch (e) {
        // Which layer fails, when it fails alone too (one by one, as for localisation); when
        // none does, the failure is predict's running of the graph.
        try {
          eager(model, spec, q.inputs, []).forEach((t) => t.dispose());
        } catch (f) {
          throw new Failed(e, f.layer || '');
        }
        throw new GraphFailed(e);
      }
    } else {
      const forced = q.forced.map(toTensor);
      made.push(...forced);
      outputs = eager(model, spec, q.inputs, forced);
    }
    // The shapes the layers give at run time, held against memo's too: a layer whose symbolic
    // shape is right can still compute another (and the layer after it fail on that).
    const names = q.mode === 0 ? spec.config.output_layers.slice(0, outputs.length).map((o) => o[0]) : spec.config.layers.map((l) => l.name);
    const at = new Map(spec.config.layers.map((l, i) => [l.name, i]));
    outputs.forEach((t, k) => {
      const want = q.shapes[at.get(names[k])];
      if (want && (t.shape.length !== want.length || t.shape.some((d, i) => i > 0 && d !== want[i]))) {
        throw new Misshapen(`layer ${names[k]}: tfjs computes an output of shape [${t.shape.slice(1)}] per sample, Keras [${want.slice(1)}]`, names[k]);
      }
    });
    const values = await fetch(outputs);
    answer(encode(0, ms(), '', '', values));
  } catch (e) {
    // tfjs' first line, without its advice on serialization ("This may be due to ...").
    const message = String(e && e.message ? e.message : e).split('\n')[0].replace(/ This may be due to .*$/, '');
    const layer = e && e.layer ? e.layer : '';
    // A trap of the WebAssembly kernels ("memory access out of bounds") leaves their memory
    // corrupt: every later model on this worker would fail for it. The worker ends, as a library
    // that crashed: memo sees this model's crash (the message is the log's last line) and starts a
    // fresh worker for the next.
    if ([e, e && e.cause].some((x) => x instanceof WebAssembly.RuntimeError)) {
      process.stderr.write(`${layer ? `layer ${layer}: ` : ''}${message}\n`, () => process.exit(70));
      return;
    }
    const status = e instanceof Misshapen ? 3 : e instanceof Declined || declines(e.cause || e) ? 2 : e instanceof GraphFailed ? 4 : 1;
    answer(encode(status, ms(), message, layer, []));
  }
  // Released after the answer is on its way: the campaign need not wait for it.
  outputs.forEach((t) => t.dispose());
  made.forEach((t) => t.dispose());
  if (model) model.dispose();
}

async function main() {
  customClasses = new Set(registerCustomLayers(tf, tfl, Declined));
  if (backend === 'wasm') require('@tensorflow/tfjs-backend-wasm');
  if (!(await tf.setBackend(backend))) throw new Error('tfjs backend ' + backend + ' did not start');
  await tf.ready();
  serveFrames(serve);
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
