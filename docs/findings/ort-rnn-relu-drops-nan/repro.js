// ONNX Runtime (onnxruntime-node, CPU): the RNN operator with a Relu activation turns a NaN into 0.
// Its activation is `std::max(0.0f, x)` (core/providers/cpu/rnn/rnn_activation_functors.h), which
// returns its first operand when x is NaN; ORT's own Relu operator keeps NaN, as Keras' SimpleRNN
// with relu does. The NaN is lost, and the steps after it compute as if the state were 0.
// repro.onnx: Keras' SimpleRNN(1 unit, activation relu, kernel and recurrent kernel 1, bias 0),
// return_sequences, as memo exports it (Transpose, RNN with activations [Relu], Squeeze, Transpose).
// x = [NaN, 1, 2]: every step's state is NaN (h = relu(x_t + h)). Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const session = await ort.InferenceSession.create('repro.onnx');
  const x = new ort.Tensor('float32', new Float32Array([NaN, 1, 2]), [1, 3, 1]);
  const out = await session.run({ [session.inputNames[0]]: x });
  const got = Array.from(out[session.outputNames[0]].data);
  console.log(`states: [${got}]; expected [NaN,NaN,NaN]`);
  process.exit(got.every(Number.isNaN) ? 0 : 1);
})();
