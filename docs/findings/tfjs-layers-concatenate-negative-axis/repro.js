// TensorFlow.js (tfjs-layers): the Concatenate layer with a negative axis other than -1 (say -2)
// concatenates along the last axis when it runs: the backend's concatenate maps every negative
// axis to the last one, while the layer's declared output shape, like Keras', joins along the
// axis given. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

(async () => {
  await tf.setBackend('cpu');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${tf.getBackend()} kernels`);
  const a = tf.tensor3d([[[1, 2], [3, 4]]]);  // [1, 2, 2]
  const b = tf.tensor3d([[[5, 6], [7, 8]]]);
  let wrong = false;
  for (const axis of [-2, 1]) {  // the same axis of a rank-3 input
    const layer = tfl.layers.concatenate({ axis });
    const declared = layer.apply([tfl.input({ shape: [2, 2] }), tfl.input({ shape: [2, 2] })]).shape;
    const y = layer.apply([a, b]);
    console.log(`axis ${axis}: declared [${declared}], computed [${y.shape}] ${JSON.stringify(await y.array())}`);
    if (y.shape[1] !== 4) wrong = true;
  }
  console.log('expected (Keras, numpy.concatenate(axis=-2)): [1,4,2] [[[1,2],[3,4],[5,6],[7,8]]]');
  process.exit(wrong ? 1 : 0);
})();
