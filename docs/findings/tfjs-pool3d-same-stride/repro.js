// TensorFlow.js 3-D ops with padding 'same' (avgPool3d, maxPool3d, conv3d) take windows one place
// late when the stride exceeds the window and the padding needed is negative: tfjs-core's
// get3DPadAndOutInfo leaves out the Math.max(0, ...) its 2-D twin has, so it pads by -1. One axis of
// six values, window 1, stride 2: the windows start at 0, 2, 4 (tf.avgPool says so); the 3-D ops
// take 1, 3, 5. Shared by the cpu and wasm backends. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');

const x = [0, 1, 2, 3, 4, 5];
const want = [0, 2, 4];

(async () => {
  let bad = false;
  for (const backend of ['cpu', 'wasm']) {
    await tf.setBackend(backend);
    console.log(`tfjs-core ${tf.version_core}, ${backend}`);
    const x5 = tf.tensor5d(x, [1, 6, 1, 1, 1]);
    const got = {
      'avgPool (2-D)': tf.avgPool(tf.tensor4d(x, [1, 6, 1, 1]), [1, 1], [2, 1], 'same'),
      avgPool3d: tf.avgPool3d(x5, [1, 1, 1], [2, 1, 1], 'same'),
      maxPool3d: tf.maxPool3d(x5, [1, 1, 1], [2, 1, 1], 'same'),
      'conv3d (1x1x1 kernel of 1)': tf.conv3d(x5, tf.ones([1, 1, 1, 1, 1]), [2, 1, 1], 'same'),
    };
    for (const [name, y] of Object.entries(got)) {
      const v = Array.from(await y.data());
      console.log(`  ${name} 'same', window 1, stride 2: [${v}] (expected [${want}])`);
      bad = bad || v.join() !== want.join();
    }
  }
  process.exit(bad ? 1 : 0);
})();
