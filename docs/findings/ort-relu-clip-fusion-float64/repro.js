// ONNX Runtime (onnxruntime-node, CPU): with graph optimisations on (from 'basic'; the default is
// 'all'), FuseReluClip fails on a float64 Relu followed by Clip, and session creation fails with
// "Unexpected data type for Clip 'min' input of 11" (11: double) for a valid model that runs
// unoptimised. repro.onnx: Keras' ReLU(max_value=2.54) in float64, a Relu then a Clip, of a [1, 2]
// input. Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  let faults = 0;
  for (const level of ['disabled', 'basic', 'all']) {
    try {
      const session = await ort.InferenceSession.create('repro.onnx', { graphOptimizationLevel: level, logSeverityLevel: 4 });
      const [meta] = session.inputMetadata;
      const x = new ort.Tensor('float64', Float64Array.from({ length: meta.shape.reduce((a, b) => a * b, 1) }, (_, i) => i - 0.5), meta.shape);
      const y = Object.values(await session.run({ [meta.name]: x }))[0];
      console.log(`optimisation '${level}': [${Array.from(y.data)}]`);
    } catch (e) {
      const m = String(e.message);
      console.log(`optimisation '${level}': session creation fails: ${m.includes('Unexpected data type') ? m.slice(m.indexOf('Unexpected data type')).trim() : m}`);
      ++faults;
    }
  }
  process.exit(faults ? 1 : 0);
})();
