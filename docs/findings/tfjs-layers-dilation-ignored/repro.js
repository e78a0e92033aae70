// TensorFlow.js (tfjs-layers): DepthwiseConv2D, Conv2DTranspose and Conv3DTranspose accept the
// documented dilationRate and silently ignore it: they convolve with the undilated kernel, so the
// output shape (and every value) is that of dilation 1. Keras dilates: a 3-wide kernel at dilation
// 2 spans 5. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
const tfl = require('@tensorflow/tfjs-layers');
require('@tensorflow/tfjs-backend-cpu');

(async () => {
  await tf.setBackend('cpu');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-layers ${tfl.version_layers}, ${tf.getBackend()} kernels`);
  const cases = [  // [layer, input shape, Keras 3's output shape]
    ['depthwiseConv2d', tfl.layers.depthwiseConv2d({ kernelSize: 3, dilationRate: 2 }), [1, 7, 7, 1], [1, 3, 3, 1]],
    ['conv2dTranspose', tfl.layers.conv2dTranspose({ filters: 1, kernelSize: 3, dilationRate: 2 }), [1, 1, 1, 1], [1, 5, 5, 1]],
    ['conv3dTranspose', tfl.layers.conv3dTranspose({ filters: 1, kernelSize: 3, dilationRate: 2 }), [1, 1, 1, 1, 1], [1, 5, 5, 5, 1]],
  ];
  let wrong = 0;
  for (const [name, layer, shape, expected] of cases) {
    let got;
    try {
      got = layer.apply(tf.ones(shape)).shape;
    } catch (e) {
      got = e.message;
    }
    console.log(`${name}, kernel 3, dilationRate 2, input [${shape}]: output [${got}], expected [${expected}]`);
    if (String(got) !== String(expected)) ++wrong;
  }
  process.exit(wrong ? 1 : 0);
})();
