// TensorFlow.js, wasm backend (WebAssembly SIMD on an x86 host): maxPool (Keras' MaxPooling1D/2D)
// over a window holding a NaN returns -Infinity or drops numbers of the window, depending on where
// the NaN sits: XNNPACK's max-pool kernel takes the maximum with pmax (a < b ? b : a), which keeps a
// NaN only as its first operand, then clamps with pmax(-Infinity, NaN) = -Infinity. tfjs' rule
// (tfjs-core's test '[x=[3,3,1] f=[2,2] s=1 ignores NaNs', which the wasm test setup skips) is the
// window's largest number, which the cpu backend and TensorFlow give. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');

const cases = [  // one window each: [values (row-major), height, width]
  [[NaN, 2, 3, 4], 2, 2],
  [[1, 2, 3, 4, 5, NaN, 7, 8, 9], 3, 3],
];
const pool = (v, h, w) => tf.maxPool(tf.tensor4d(v, [1, h, w, 1]), [h, w], 1, 'valid').dataSync()[0];

(async () => {
  const cpu = [];
  await tf.setBackend('cpu');
  for (const [v, h, w] of cases) cpu.push(pool(v, h, w));
  await tf.setBackend('wasm');
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, ${tf.getBackend()} backend, SIMD ${tf.env().getBool('WASM_HAS_SIMD_SUPPORT')}`);
  let faults = 0;
  cases.forEach(([v, h, w], i) => {
    const got = pool(v, h, w);
    const expected = Math.max(...v.filter(x => !Number.isNaN(x)));  // NaN ignored
    if (got !== expected) faults++;
    console.log(`maxPool ${h}x${w} of [${v}]: ${got}, expected ${expected} (cpu backend: ${cpu[i]})`);
  });
  process.exit(faults ? 1 : 0);
})();
