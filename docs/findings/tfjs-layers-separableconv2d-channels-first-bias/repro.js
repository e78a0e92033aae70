// TensorFlow.js (tfjs-layers): SeparableConv2D with dataFormat 'channelsFirst' and a bias adds the
// bias as if the result were channels-first while it is still channels-last (NHWC, transposed back
// only after the bias): the bias lands on the rows, not on the filters (silently when the height
// equals the filters, else "Operands could not be broadcast"). Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

(async () => {
  await tf.setBackend('cpu');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${tf.getBackend()} kernels`);
  // Input [1, 2 channels, 3 rows, 5 cols] of ones; 1x1 kernels of ones, 3 filters, bias [0, 10, 20]:
  // filter f is 2 + 10 f everywhere (Keras 3: [2, 12, 22] down the filters, constant along a column).
  const layer = tfl.layers.separableConv2d({ filters: 3, kernelSize: 1, dataFormat: 'channelsFirst' });
  layer.apply(tfl.input({ shape: [2, 3, 5] }));
  layer.setWeights([tf.ones([1, 1, 2, 1]), tf.ones([1, 1, 2, 3]), tf.tensor1d([0, 10, 20])]);
  const y = await layer.apply(tf.ones([1, 2, 3, 5])).array();
  const filters = [0, 1, 2].map((f) => y[0][f][0][0]);
  const rows = [0, 1, 2].map((h) => y[0][0][h][0]);
  console.log(`y[0, :, 0, 0] (down the filters) = [${filters}], expected [2,12,22]`);
  console.log(`y[0, 0, :, 0] (down the rows)    = [${rows}], expected [2,2,2]`);
  let wrong = filters.join() !== '2,12,22' || rows.join() !== '2,2,2';
  try {  // 4 rows, 3 filters: the bias cannot even broadcast
    layer.apply(tf.ones([1, 2, 4, 5]));
  } catch (e) {
    console.log(`input [1,2,4,5]: ${e.message}`);
    wrong = true;
  }
  process.exit(wrong ? 1 : 0);
})();
