// ONNX Runtime (onnxruntime-node, CPU): an LSTM given a bias B turns a NaN gate input into +FLT_MAX
// (its bias-and-clip step keeps `std::min(clip, x)`, which returns the clip bound for NaN), so a NaN
// in X gives a finite Y_h = tanh(1) and Y_c = 1 instead of NaN. The same LSTM without B returns NaN,
// as the ONNX LSTM equations do. with_bias.onnx / without_bias.onnx: LSTM, hidden_size 1, W all 0.5,
// R all 0.25, B all 0 (only in the first), one step of one input. Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const x = new ort.Tensor('float32', new Float32Array([NaN]), [1, 1, 1]);
  let faults = 0;
  for (const file of ['without_bias.onnx', 'with_bias.onnx']) {
    const session = await ort.InferenceSession.create(file);
    const out = await session.run({ x });
    const [h, c] = [out.Y_h.data[0], out.Y_c.data[0]];
    console.log(`${file}: X = NaN gives Y_h = ${h}, Y_c = ${c}; expected NaN, NaN`);
    if (!Number.isNaN(h) || !Number.isNaN(c)) ++faults;
  }
  process.exit(faults ? 1 : 0);
})();
