// TensorFlow.js BatchNormalization over an axis other than the last (e.g. axis 1, channels first)
// normalises with the wrong channel's statistics on the cpu and wasm backends. tfjs-layers reshapes
// mean, variance, gamma and beta to [1, C, 1, 1] and calls tf.batchNorm, whose cpu and wasm kernels
// walk them cyclically along the flat input, i.e. as if the channel were the last axis (tf.batchNorm
// documents only [C] on the last axis or the input's full shape). Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');

// input [1, 2, 1, 2]: channel 0 holds [1, 2], channel 1 holds [10, 20]
const x = [1, 2, 10, 20];
const mean = [1, 10], variance = [1, 4], gamma = [1, 1], beta = [0, 0], eps = 1e-3;
const want = x.map((v, i) => { const c = Math.floor(i / 2); return (v - mean[c]) / Math.sqrt(variance[c] + eps) * gamma[c] + beta[c]; });

(async () => {
  let bad = false;
  for (const backend of ['cpu', 'wasm']) {
    await tf.setBackend(backend);
    const layer = tfl.layers.batchNormalization({ axis: 1, epsilon: eps, inputShape: [2, 1, 2] });
    const model = tfl.sequential({ layers: [layer] });
    layer.setWeights([gamma, beta, mean, variance].map((a) => tf.tensor1d(a)));
    const got = Array.from(await model.predict(tf.tensor4d(x, [1, 2, 1, 2])).data());
    console.log(`tfjs-core ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${backend}: ` +
      `BatchNormalization(axis=1) [${got.map((v) => v.toFixed(4))}], expected [${want.map((v) => v.toFixed(4))}]`);
    bad = bad || got.some((g, i) => Math.abs(g - want[i]) > 1e-4);
  }
  process.exit(bad ? 1 : 0);
})();
