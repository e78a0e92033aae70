// TensorFlow.js (tfjs-layers) UpSampling2D with interpolation 'bilinear' samples at the wrong places:
// it calls tf.image.resizeBilinear without halfPixelCenters, the pre-TF-2 sampling (source = out * in
// / out_size), where Keras' UpSampling2D (tf.keras 2.x and Keras 3: tf.image.resize) uses half-pixel
// centres (source = (out + 0.5) * in / out_size - 0.5). The same Keras model gives other values in
// tfjs. Expected values below are Keras 3.15 / TensorFlow 2.21's. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');

const x = [0, 1, 0, 4];  // shape [1, 4, 1, 1], upsampled by (2, 1)
const halfPixel = (v, s) => Array.from({ length: v.length * s }, (_, o) => {
  const src = Math.min(Math.max((o + 0.5) / s - 0.5, 0), v.length - 1);
  const lo = Math.floor(src), hi = Math.min(lo + 1, v.length - 1);
  return v[lo] + (v[hi] - v[lo]) * (src - lo);
});
const want = halfPixel(x, 2);  // Keras: [0, 0.25, 0.75, 0.75, 0.25, 1, 3, 4]

(async () => {
  let bad = false;
  for (const backend of ['cpu', 'wasm']) {
    await tf.setBackend(backend);
    const model = tfl.sequential({ layers: [tfl.layers.upSampling2d({ size: [2, 1], interpolation: 'bilinear', inputShape: [4, 1, 1] })] });
    const got = Array.from(await model.predict(tf.tensor4d(x, [1, 4, 1, 1])).data());
    console.log(`tfjs-core ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${backend}: UpSampling2D bilinear of [${x}]: [${got}], Keras [${want}]`);
    bad = bad || got.some((g, i) => Math.abs(g - want[i]) > 1e-6);
  }
  process.exit(bad ? 1 : 0);
})();
