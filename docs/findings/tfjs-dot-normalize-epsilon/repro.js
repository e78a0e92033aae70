// TensorFlow.js (tfjs-layers) Dot with normalize: true does not normalise vectors shorter than
// about 3.2e-4: its l2Normalize clamps the squared norm at epsilon() = 1e-7 (x / sqrt(max(sum x^2,
// 1e-7))), where Keras 2 (tf.linalg.l2_normalize) clamps the squared norm at 1e-12 and Keras 3 the
// norm at 1e-7. The cosine of a vector with itself comes out far below 1 (Keras 3.15: 0.9999999).
// Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

(async () => {
  await tf.setBackend('cpu');
  console.log(`tfjs-core ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${tf.getBackend()}`);
  const a = tfl.input({ shape: [2] }), b = tfl.input({ shape: [2] });
  const model = tfl.model({ inputs: [a, b], outputs: tfl.layers.dot({ axes: -1, normalize: true }).apply([a, b]) });
  let bad = false;
  for (const [p, q] of [[3, 4], [3e-5, 4e-5]]) {
    const v = tf.tensor2d([[p, q]]);
    const got = (await model.predict([v, v]).data())[0];
    console.log(`cosine of [${p}, ${q}] (norm ${Math.hypot(p, q).toPrecision(2)}) with itself: ${got} (expected 1)`);
    bad = bad || Math.abs(got - 1) > 1e-5;
  }
  process.exit(bad ? 1 : 0);
})();
