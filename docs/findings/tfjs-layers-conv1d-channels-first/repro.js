// TensorFlow.js (tfjs-layers): Conv1D with dataFormat 'channelsFirst' returns its output in
// channels-last order, [batch, width, filters]: the input is transposed to NWC for the
// convolution but the result is never transposed back (Conv2D and Conv3D do transpose back), while
// the layer's own computeOutputShape says [batch, filters, width], as Keras does. Exits 1 while the
// fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

(async () => {
  await tf.setBackend('cpu');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${tf.getBackend()} kernels`);
  // 2 channels of width 5 in, 3 filters of width 1 out; every weight 1, so each output is 1 + 2 = 3.
  const layer = tfl.layers.conv1d({ filters: 3, kernelSize: 1, dataFormat: 'channelsFirst', kernelInitializer: 'ones', biasInitializer: 'ones' });
  const declared = layer.apply(tfl.input({ shape: [2, 5] })).shape;
  const y = layer.apply(tf.ones([1, 2, 5]));
  console.log(`declared output shape [${declared}], computed [${y.shape}], Keras [null,3,5]`);
  const wrong = y.shape[1] !== 3 || y.shape[2] !== 5;
  process.exit(wrong ? 1 : 0);
})();
