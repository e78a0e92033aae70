// TensorFlow.js, wasm backend: tf.minimum and tf.maximum keep a NaN only when it is the first
// operand: the kernels use std::min(a, b) and std::max(a, b), which return a when b is NaN, so
// minimum(1, NaN) is 1 while minimum(NaN, 1) is NaN (Keras' Minimum and Maximum layers inherit it).
// The cpu backend, TensorFlow and tfjs-core's own test ('propagates NaN') give NaN either way.
// Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend`);
  const one = tf.scalar(1), nan = tf.scalar(NaN);
  let faults = 0;
  for (const [name, t] of [['minimum(NaN, 1)', tf.minimum(nan, one)], ['minimum(1, NaN)', tf.minimum(one, nan)],
                           ['maximum(NaN, 1)', tf.maximum(nan, one)], ['maximum(1, NaN)', tf.maximum(one, nan)]]) {
    const v = (await t.data())[0];
    if (!Number.isNaN(v)) faults++;
    console.log(`${name}: ${v}, expected NaN`);
  }
  process.exit(faults ? 1 : 0);
})();
