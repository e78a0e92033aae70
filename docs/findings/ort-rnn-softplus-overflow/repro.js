// ONNX Runtime (onnxruntime-node, CPU): the Softplus activation of LSTM (and GRU, RNN) is computed as
// log(1 + exp(x)), which overflows to Infinity once x passes ~88.7, though softplus(x) is then x
// (ORT's own Softplus operator is stable). An output gate of 0 then gives 0 * Infinity = NaN.
// repro.onnx: LSTM, hidden_size 2, activations [Sigmoid, Softplus, Softplus], R 0, no bias;
// W (gates i, o, f, c): unit 0 = 1, 1, 0, 1; unit 1 = 1, -1000, 0, 1. X = 100, one step.
// Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const softplus = (v) => Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v)));
  const sigmoid = (v) => 1 / (1 + Math.exp(-v));
  // c = sigmoid(100) * softplus(100) = 100 for both units; h = sigmoid(o) * softplus(c)
  const c = sigmoid(100) * softplus(100);
  const want = { Y_h: [sigmoid(100) * softplus(c), sigmoid(-1e5) * softplus(c)], Y_c: [c, c] };
  const session = await ort.InferenceSession.create('repro.onnx');
  const out = await session.run({ x: new ort.Tensor('float32', new Float32Array([100]), [1, 1, 1]) });
  let faults = 0;
  for (const name of ['Y_h', 'Y_c']) {
    const got = Array.from(out[name].data);
    console.log(`${name}: [${got}]; expected [${want[name]}]`);
    if (!got.every((v, i) => Math.abs(v - want[name][i]) <= 1e-5 * Math.max(1, Math.abs(want[name][i])))) ++faults;
  }
  process.exit(faults ? 1 : 0);
})();
