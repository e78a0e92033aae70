// TensorFlow.js, wasm backend: relu, relu6, clipByValue and the relu/relu6 activations fused into
// conv2d, depthwiseConv2d and matMul run on XNNPACK's clamp, which does not keep NaN: relu turns a
// NaN whose sign bit is set (the NaN that 0/0, Inf - Inf or 0 * Inf give) into 0, while relu6,
// clipByValue (Keras' hard_sigmoid) and the fused relu turn any NaN into the lower bound. The cpu
// backend and TensorFlow return NaN. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend`);
  const nan = tf.div(tf.scalar(0), tf.scalar(0));        // NaN, sign bit set
  const x = tf.reshape(tf.concat([tf.reshape(nan, [1]), tf.tensor1d([1, 2, 3])]), [1, 2, 2, 1]);
  const got = {
    'relu(0/0)': tf.relu(nan),
    'relu(NaN literal)': tf.relu(tf.scalar(NaN)),          // a positive NaN survives
    'relu6(NaN)': tf.relu6(tf.scalar(NaN)),
    'clipByValue(NaN, 0, 1)': tf.clipByValue(tf.scalar(NaN), 0, 1),
    'fused conv2d relu, window [NaN,1,2,3]': tf.fused.conv2d({x, filter: tf.ones([2, 2, 1, 1]), strides: 1, pad: 'valid', activation: 'relu'}),
    'fused matMul relu, [NaN,1] x ones': tf.fused.matMul({a: tf.tensor2d([NaN, 1], [1, 2]), b: tf.ones([2, 1]), activation: 'relu'}),
  };
  let faults = 0;
  for (const [name, t] of Object.entries(got)) {
    const v = (await t.data())[0];
    if (!Number.isNaN(v)) faults++;
    console.log(`${name}: ${v}, expected NaN`);
  }
  process.exit(faults ? 1 : 0);
})();
