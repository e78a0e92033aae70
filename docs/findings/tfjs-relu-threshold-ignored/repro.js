// TensorFlow.js (tfjs-layers) ReLU: a Keras model's ReLU layer with `threshold` or `negative_slope`
// loads without complaint but computes plain max(x, 0) (clipped at max_value): tfjs-layers reads
// only max_value and silently drops the other two keys. Keras' ReLU (since 2.2.3) is
// f(x) = max_value if x >= max_value, x if threshold <= x < max_value, negative_slope * (x - threshold)
// otherwise. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

const keras = (threshold, slope) => ({
  class_name: 'Sequential', keras_version: '2.8.0', backend: 'tensorflow',
  config: { name: 'm', layers: [{ class_name: 'ReLU', config: { name: 'relu', batch_input_shape: [null, 4],
    dtype: 'float32', max_value: null, negative_slope: slope, threshold } }] },
});
const reluKeras = (x, t, s) => (x >= t ? x : s * (x - t));

(async () => {
  await tf.setBackend('cpu');
  console.log(`tfjs-core ${tf.version_core}, tfjs-layers ${tfl.version_layers}, backend ${tf.getBackend()}`);
  const x = [-2, -0.5, 0.25, 0.75];
  let bad = false;
  for (const [t, s] of [[0.5, 0], [0, 0.1]]) {
    const model = await tfl.models.modelFromJSON(keras(t, s));
    const got = Array.from(await model.predict(tf.tensor2d([x])).data());
    const want = x.map((v) => reluKeras(v, t, s));
    console.log(`ReLU(threshold=${t}, negative_slope=${s}) of [${x}]: tfjs [${got}], Keras [${want}]`);
    bad = bad || got.some((g, i) => Math.abs(g - want[i]) > 1e-6);
  }
  process.exit(bad ? 1 : 0);
})();
