// ONNX Runtime (onnxruntime-node, CPU): with graph optimisations on (level 'basic' and above, the
// default), PadFusion folds a Pad of constant 0 into the next MaxPool's `pads`; but MaxPool's own
// padding never wins the max (it acts as -inf), so every window that touched the zeros now returns
// its largest real value instead, silently, wherever that value is negative. repro.onnx:
// Pad([0,0,1,0,0,1], constant 0) of a 1x1x4 input, then MaxPool (kernel 3, strides 1, pads 0).
// Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const x = new ort.Tensor('float32', new Float32Array([-1, -2, -3, -4]), [1, 1, 4]);
  // padded input [0, -1, -2, -3, -4, 0]; windows of 3: max 0, -1, -2, 0
  const want = [0, -1, -2, 0];
  let faults = 0;
  for (const level of ['disabled', 'basic', 'all']) {
    const session = await ort.InferenceSession.create('repro.onnx', { graphOptimizationLevel: level });
    const got = Array.from((await session.run({ x })).y.data);
    console.log(`optimisation '${level}': [${got}]; expected [${want}]`);
    if (!got.every((v, i) => v === want[i])) ++faults;
  }
  process.exit(faults ? 1 : 0);
})();
