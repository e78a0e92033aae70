// TensorFlow.js, wasm backend: maxPool3d returns 1.1754944e-38 for every window whose values are all
// negative: its running maximum starts at std::numeric_limits<float>::min(), the smallest positive
// float, instead of lowest() or -infinity. maxPoolWithArgmax on wasm shares the fault; the cpu
// backend and maxPool (2-D, XNNPACK) on wasm are right.
// Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend`);
  const values = [-0.5, -1, -2, -3, -4, -5, -6, -7];
  const x = tf.tensor5d(values, [1, 2, 2, 2, 1]);
  const expected = Math.max(...values);  // -0.5
  const got3d = (await tf.maxPool3d(x, 2, 1, 'valid').data())[0];
  const got2d = (await tf.maxPool(tf.reshape(x, [1, 2, 4, 1]), [2, 4], 1, 'valid').data())[0];
  console.log(`maxPool3d of [${values}]: ${got3d}, expected ${expected}`);
  const argmax = (await tf.maxPoolWithArgmax(tf.reshape(x, [1, 2, 4, 1]), [2, 4], 1, 'valid').result.data())[0];
  console.log(`maxPool   of the same values: ${got2d}, expected ${expected}`);
  console.log(`maxPoolWithArgmax of them: ${argmax}, expected ${expected}`);
  process.exit(got3d !== expected || argmax !== expected ? 1 : 0);
})();
