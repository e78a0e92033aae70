// ONNX Runtime (onnxruntime-node, CPU): with graph optimisations on (level 'basic' and above, the
// default), PadFusion folds a zero Pad into the next AveragePool/MaxPool's `pads` without checking
// that the sum stays below the kernel, which ORT's own pool kernels require: session creation fails
// with "Pad should be smaller than kernel" for a valid model that runs with optimisations off.
// Each model: Pad([0,0,2,0,0,2], constant 0) of a 1x1x4 input, then a pool (kernel 2, strides 2,
// pads 0). Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const x = new ort.Tensor('float32', new Float32Array([1, 2, 3, 4]), [1, 1, 4]);
  // padded input [0, 0, 1, 2, 3, 4, 0, 0]; windows [0,0] [1,2] [3,4] [0,0]
  const expected = { 'averagepool.onnx': [0, 1.5, 3.5, 0], 'maxpool.onnx': [0, 2, 4, 0] };
  let faults = 0;
  for (const [file, want] of Object.entries(expected)) {
    for (const level of ['disabled', 'all']) {
      let got;
      try {
        const session = await ort.InferenceSession.create(file, { graphOptimizationLevel: level, logSeverityLevel: 4 });
        got = Array.from((await session.run({ x })).y.data);
      } catch (e) {
        const m = String(e.message);
        got = `session creation fails: ${m.includes('Pad should be smaller than kernel') ? '"Pad should be smaller than kernel"' : m}`;
      }
      const ok = Array.isArray(got) && got.every((v, i) => v === want[i]);
      console.log(`${file}, optimisation '${level}': ${Array.isArray(got) ? `[${got}]` : got}; expected [${want}]`);
      if (!ok) ++faults;
    }
  }
  process.exit(faults ? 1 : 0);
})();
