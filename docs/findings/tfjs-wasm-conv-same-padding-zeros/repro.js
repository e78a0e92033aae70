// TensorFlow.js, wasm backend: conv2d and depthwiseConv2d with padding 'same' return zeros when the
// last window stops short of the input's far edge ((out - 1) * stride + kernel < in, where TensorFlow
// pads nothing). A 3x3 input, a 2x2 kernel of ones, stride 3: the one window covers rows and columns
// 0..1, so the answer is 1 + 2 + 4 + 5 = 12 (the cpu backend agrees); wasm gives 0. The kernels hand
// XNNPACK its TensorFlow-SAME flag instead of tfjs' own (correct) padding. Exits 1 while it shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend`);
  const x = tf.tensor4d([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 3, 3, 1]);
  const w = tf.ones([2, 2, 1, 1]);
  const expected = 12;  // by hand: x[0][0] + x[0][1] + x[1][0] + x[1][1]
  let wrong = 0;
  for (const [name, y] of [['conv2d', tf.conv2d(x, w, 3, 'same')],
                           ['depthwiseConv2d', tf.depthwiseConv2d(x, w, 3, 'same')],
                           ['conv2d (valid, same window)', tf.conv2d(x, w, 3, 'valid')]]) {
    const got = (await y.data())[0];
    console.log(`${name}, stride 3: [${y.shape}] = ${got}, expected ${expected}`);
    if (got !== expected) ++wrong;
  }
  process.exit(wrong ? 1 : 0);
})();
