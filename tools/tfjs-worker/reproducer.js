// A bug's reproducer in TensorFlow.js' own terms: STEM.json holds memo's minimal model as the
// Keras JSON tfjs-layers reads (in the dialect the worker gave it), the weights the worker set,
// the inputs and the values expected (each tensor's bytes in base64, so nothing is rounded on the
// way); STEM.js, a script of one screen that imports only TensorFlow.js, builds the model with
// tfl.models.modelFromJSON, runs model.predict on the worker's kernels (cpu or wasm), compares each
// output with the values expected (memo's float64 reference) within memo's rounding bound, prints
// what differs, and exits 1 while the fault shows and 0 once it does not. A failing call is the
// fault where memo saw a crash. memo's layers that Keras has no class for (layers.js) are copied
// in where the model uses one.
'use strict';
const fs = require('fs');
const path = require('path');
const { tensorJson, PRELUDE, fill, command } = require('../reproducing.js');
const { addChainedOps, registerCustomLayers } = require('./layers.js');

const SCRIPT = `// {title}
//
// TensorFlow.js {version} (tfjs-layers), {backend} kernels. {stem}.json holds the model (its Keras
// JSON, as tfjs-layers reads it), its weights, its inputs and, for each output checked, the values
// expected (float64, as a reference implementation computes them) and the most that float32
// rounding explains. Run it from its folder (npm install @tensorflow/tfjs-core@{version}
// @tensorflow/tfjs-layers@{version} @tensorflow/tfjs-backend-{backend}@{version}): it prints each
// output's largest difference and exits 1 while the fault shows, 0 once it does not.
'use strict';
const fs = require('fs');
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-{backend}');

{setup}
const data = JSON.parse(fs.readFileSync('{stem}.json', 'utf8'));
{prelude}
(async () => {
  await tf.setBackend('{backend}');
  await tf.ready();
  console.log(\`TensorFlow.js \${tf.version_core}, tfjs-layers \${tfl.version_layers}, \${tf.getBackend()} kernels, Node \${process.version}, \${process.platform} \${process.arch}\`);
  const tensor = (t) => tf.tensor(array(t), t.dims, 'float32');
  const check = async (got, show) => {
    const faults = [];
    for (const [k, o] of data.outputs.entries())
      if (o.expected) faults.push(differs(o.name, { dims: got[k].shape, data: await got[k].data() }, o.expected, o.bound, show));
    return faults;
  };
  let faults;
  try {
    const model = await tfl.models.modelFromJSON(data.model);
    for (const [layer, weights] of Object.entries(data.weights)) model.getLayer(layer).setWeights(weights.map(tensor));
    const x = data.inputs.map(tensor);
    const stateful = model.layers.some((layer) => layer.stateful);
    faults = await checkedRuns(() => {
      if (stateful) model.resetStates();  // each call starts from zero state, as memo's run did
      const got = model.predict(x.length === 1 ? x[0] : x);
      return Array.isArray(got) ? got : [got];
    }, check);
  } catch (e) {  // the fault, where memo saw a crash
    console.log(\`the model fails: \${String(e && e.message ? e.message : e).split('\\n')[0]}\`);
    process.exit(1);
  }
  if (!faults.length) console.log('the model runs');
  process.exit(faults.some((f) => f) ? 1 : 0);
})();
`;

/// Writes STEM.json and STEM.js into `directory`; returns the script's path. `spec` is the model's
/// Keras JSON as the worker built it, `model` the tfjs model with memo's weights set, `outputs`
/// the layers the script's model returns, each with {expected, bound} where it is checked.
async function write(directory, stem, title, spec, model, inputs, outputs, backend, version, customClasses) {
  fs.mkdirSync(directory, { recursive: true });
  const out = JSON.parse(JSON.stringify(spec));
  out.config.output_layers = outputs.map((o) => [o.name, 0, 0]);
  // Only the layers the checked outputs need (tfjs would leave the others out of the model, and
  // their weights would name no layer of it); the inputs stay, as the script feeds them all.
  const byName = new Map(spec.config.layers.map((l) => [l.name, l]));
  const needed = new Set();
  for (const todo = outputs.map((o) => o.name); todo.length;) {
    const name = todo.pop();
    if (needed.has(name) || !byName.has(name)) continue;
    needed.add(name);
    for (const e of byName.get(name).inbound_nodes[0] || []) todo.push(e[0]);
  }
  out.config.layers = out.config.layers.filter((l) => l.class_name === 'InputLayer' || needed.has(l.name));
  const weights = {};
  for (const layer of model.layers) {
    const values = layer.getWeights();
    if (!values.length || !needed.has(layer.name)) continue;
    weights[layer.name] = [];
    for (const v of values) weights[layer.name].push(tensorJson({ dims: v.shape, data: await v.data() }));
  }
  const data = {
    model: out,
    weights,
    inputs: inputs.map((t) => tensorJson({ dims: t.dims, data: t.data })),
    outputs: outputs.map((o) => (o.expected ? { name: o.name, expected: tensorJson(o.expected), bound: o.bound } : { name: o.name })),
  };
  fs.writeFileSync(path.join(directory, stem + '.json'), JSON.stringify(data) + '\n');
  const used = spec.config.layers.some((l) => customClasses.has(l.class_name));
  const setup = [
    '// tfjs-core\'s CommonJS build leaves out the chained tensor methods its recurrent layers call.',
    `${addChainedOps.toString()}\naddChainedOps(tf);\n`,
    ...(used ? ['// Layers Keras has no class for, as this model uses them.', `${registerCustomLayers.toString()}\nregisterCustomLayers(tf, tfl, Error);\n`] : []),
  ].join('\n');
  const file = path.join(directory, stem + '.js');
  fs.writeFileSync(file, fill(SCRIPT, { title: title.replace(/\n/g, ' '), version, backend, stem, setup, prelude: PRELUDE }));
  return file;
}

module.exports = { write, command: (script) => command(script, path.join(__dirname, 'node_modules')) };
