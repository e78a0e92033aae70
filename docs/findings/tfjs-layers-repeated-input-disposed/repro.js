// TensorFlow.js (tfjs-layers): LayersModel.predict disposes a tensor too early when one layer reads
// it twice (concatenate([r, r])) and another layer reads it too: the executor counts a tensor's
// reading layers (a Set) but decrements the count once per input slot, so the count reaches 0 after
// the first layer and the second finds the tensor disposed ("Cannot read properties of undefined
// (reading 'backend')", or "Tensor is disposed."). Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  let failed = 0;
  for (const backend of ['cpu', 'wasm']) {
    await tf.setBackend(backend);
    const x = tfl.input({ shape: [2] });
    const r = tfl.layers.activation({ activation: 'relu' }).apply(x);
    const twice = tfl.layers.concatenate().apply([r, r]);      // r read twice by one layer
    const y = tfl.layers.concatenate().apply([r, twice]);      // and once by another
    const model = tfl.model({ inputs: x, outputs: y });
    let got;
    try {
      got = Array.from(await model.predict(tf.tensor2d([[1, 2]])).data());
    } catch (e) {
      got = `fails: ${e.message}`;
      ++failed;
    }
    console.log(`${backend}: predict gives ${JSON.stringify(got)}, expected [1,2,1,2,1,2]`);
  }
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-layers ${tfl.version_layers}, Node ${process.version}`);
  process.exit(failed ? 1 : 0);
})();
