// TensorFlow.js, wasm backend: conv3dTranspose (the Conv3DBackpropInputV2 kernel) is wrong whenever a
// stride exceeds 1, and along depth even with stride 1: the depth loop's bound is
// DivFloor(filter_depth, stride_depth), without the corner term its height and width loops add. One
// input voxel of 1 and a 2x2x2 kernel of 1..8 with stride 2 must give the kernel itself (the cpu
// backend does); wasm gives only its last value. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-wasm');

(async () => {
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend`);
  const kernel = [1, 2, 3, 4, 5, 6, 7, 8];  // [d, h, w, outChannels, inChannels] = [2, 2, 2, 1, 1]
  const f = tf.tensor5d(kernel, [2, 2, 2, 1, 1]);
  let wrong = 0;
  // stride 2: y[d][h][w] = x * f[d][h][w]; stride 1 with a 1x1x1 kernel of 1 over two depth slices: y = x
  for (const [name, x, filter, out, stride, expected] of [
    ['1 voxel, kernel 2, stride 2', tf.ones([1, 1, 1, 1, 1]), f, [1, 2, 2, 2, 1], 2, kernel],
    ['2x1x1 input, kernel 1, stride 1', tf.tensor5d([3, 4], [1, 2, 1, 1, 1]), tf.ones([1, 1, 1, 1, 1]), [1, 2, 1, 1, 1], 1, [3, 4]]]) {
    const got = Array.from(await tf.conv3dTranspose(x, filter, out, stride, 'valid').data());
    console.log(`${name}: [${got}], expected [${expected}]`);
    if (got.some((v, i) => v !== expected[i])) ++wrong;
  }
  process.exit(wrong ? 1 : 0);
})();
