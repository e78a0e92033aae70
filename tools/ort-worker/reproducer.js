// A bug's reproducer in ONNX Runtime's own terms: memo's minimal model as the ONNX file the worker
// ran (STEM.onnx), its inputs and the values expected in STEM.json (each tensor's float32 or
// float64 bytes in base64, so nothing is rounded on the way), and STEM.js, a script of one screen
// that imports only onnxruntime-node, runs the model as the worker did, compares each output with
// the values expected (memo's float64 reference) within memo's rounding bound, prints what differs,
// and exits 1 while the fault shows and 0 once it does not. A failing call is the fault where memo
// saw a crash.
'use strict';
const fs = require('fs');
const path = require('path');
const { tensorJson, PRELUDE, fill, command } = require('../reproducing.js');

const SCRIPT = `// {title}
//
// ONNX Runtime {version} (onnxruntime-node), graph optimisation level '{level}', one thread.
// {stem}.onnx is the model; {stem}.json holds its inputs and, for each output checked, the values
// expected (float64, as a reference implementation computes them) and the most that float32
// rounding explains. Run it from its folder (npm install onnxruntime-node@{version}): it prints
// each output's largest difference and exits 1 while the fault shows, 0 once it does not.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const data = JSON.parse(fs.readFileSync('{stem}.json', 'utf8'));
{prelude}
(async () => {
  console.log(\`ONNX Runtime {version} (onnxruntime-node), Node \${process.version}, \${process.platform} \${process.arch}\`);
  const feeds = {};
  for (const x of data.inputs) feeds[x.name] = new ort.Tensor(x.type, array(x), x.dims);
  const checked = data.outputs.filter((o) => o.expected);
  const check = async (got, show) => checked.map((o) => differs(o.name, got[o.name], o.expected, o.bound, show));
  let faults;
  try {
    const session = await ort.InferenceSession.create('{stem}.onnx', {
      graphOptimizationLevel: '{level}', executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    faults = await checkedRuns(() => session.run(feeds, data.outputs.map((o) => o.name)), check);
  } catch (e) {  // the fault, where memo saw a crash
    console.log(\`the model fails: \${e && e.message ? e.message : e}\`);
    process.exit(1);
  }
  if (!checked.length) console.log('the model runs');
  process.exit(faults.some((f) => f) ? 1 : 0);
})();
`;

/// Writes STEM.onnx, STEM.json and STEM.js into `directory`; returns the script's path. `feeds`
/// by name as the worker made them; `outputs` the names run, each with {expected, bound} where it
/// is checked.
function write(directory, stem, title, model, feeds, outputs, level, version) {
  fs.mkdirSync(directory, { recursive: true });
  fs.writeFileSync(path.join(directory, stem + '.onnx'), model);
  const data = {
    inputs: Object.entries(feeds).map(([name, t]) => ({ name, ...tensorJson(t) })),
    outputs: outputs.map((o) => (o.expected ? { name: o.name, expected: tensorJson(o.expected), bound: o.bound } : { name: o.name })),
  };
  fs.writeFileSync(path.join(directory, stem + '.json'), JSON.stringify(data, null, 1) + '\n');
  const file = path.join(directory, stem + '.js');
  fs.writeFileSync(file, fill(SCRIPT, { title: title.replace(/\n/g, ' '), version, level, stem, prelude: PRELUDE }));
  return file;
}

module.exports = { write, command: (script) => command(script, path.join(__dirname, 'node_modules')) };
