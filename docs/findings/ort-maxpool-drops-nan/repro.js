// ONNX Runtime (onnxruntime-node, CPU): MaxPool over a window that holds a NaN returns the window's
// largest number instead of NaN, unless the NaN is the window's last element: a running maximum
// that keeps `x > max`, which is false for NaN. numpy's max of such a window is NaN. Exits 1 while
// the fault shows. repro.onnx: one MaxPool (kernel 2x2, strides 2, NCHW) of a 1x1x4x4 input.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  const session = await ort.InferenceSession.create('repro.onnx');
  const [input] = session.inputNames;
  const [output] = session.outputNames;
  let dropped = 0;
  for (const at of [0, 1, 4, 5]) {  // each place of the first 2x2 window
    const x = new Float32Array(16).fill(0.5);
    x[at] = NaN;
    const y = (await session.run({ [input]: new ort.Tensor('float32', x, [1, 1, 4, 4]) }))[output].data;
    console.log(`NaN at input[${at}]: the first window's max is ${y[0]}`);
    if (!Number.isNaN(y[0])) ++dropped;
  }
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}: ${dropped} of 4 windows lose their NaN`);
  process.exit(dropped ? 1 : 0);
})();
