// TensorFlow.js, wasm backend: conv2d, depthwiseConv2d, maxPool and avgPool with padding 'valid' and a
// window larger than the input (an output with 0 rows or columns, which the cpu backend returns as an empty
// tensor) leave the WebAssembly memory corrupted: the call returns an empty tensor or throws
// "memory access out of bounds", and from then on every wasm op of the process, tf.add included,
// throws "memory access out of bounds". Each case runs in a process of its own. Exits 1 while the fault shows.
'use strict';
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
require('@tensorflow/tfjs-backend-wasm');
const { spawnSync } = require('child_process');

const cases = {  // input [1, H, W, C], window 3x3: H or W below 3 gives an empty output
  conv2d: () => tf.conv2d(tf.ones([1, 2, 5, 2]), tf.ones([3, 3, 2, 2]), 1, 'valid'),
  depthwiseConv2d: () => tf.depthwiseConv2d(tf.ones([1, 5, 2, 2]), tf.ones([3, 3, 2, 1]), 1, 'valid'),
  maxPool: () => tf.maxPool(tf.ones([1, 1, 5, 2]), 3, 2, 'valid'),
  avgPool: () => tf.avgPool(tf.ones([1, 1, 5, 2]), 3, 2, 'valid'),
};

async function child(backend, name) {
  await tf.setBackend(backend);
  let op, after;
  try { const y = cases[name](); await y.data(); op = `gives shape [${y.shape}]`; } catch (e) { op = `throws "${e.message}"`; }
  try { after = `[${await tf.add(tf.ones([4]), tf.ones([4])).data()}]`; } catch (e) { after = `throws "${e.message}"`; }
  console.log(`${backend.padEnd(4)} ${name.padEnd(15)} ${op}; then tf.add(ones(4), ones(4)) ${after}`);
  process.exit(after === '[2,2,2,2]' ? 0 : 1);
}

if (process.argv[2]) child(process.argv[2], process.argv[3]);
else {
  console.log(`TensorFlow.js ${tf.version_core}, tfjs-backend-wasm ${require('@tensorflow/tfjs-backend-wasm/package.json').version}, Node ${process.version}`);
  let faults = 0;
  for (const backend of ['cpu', 'wasm'])
    for (const name of Object.keys(cases)) {
      const r = spawnSync(process.execPath, [__filename, backend, name], { encoding: 'utf8' });
      process.stdout.write(r.stdout.split('\n').filter((l) => /^(cpu|wasm) /.test(l)).join('\n') + '\n');
      if (r.status !== 0) ++faults;
    }
  console.log(`expected: an empty output and then [2,2,2,2], as on cpu; ${faults} case(s) leave the backend broken`);
  process.exit(faults ? 1 : 0);
}
