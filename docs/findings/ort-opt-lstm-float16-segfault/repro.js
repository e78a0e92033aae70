// ONNX Runtime (onnxruntime-node, CPU): a float16 LSTM behind a float16 Bidirectional LSTM (a
// float32 input cast to float16) runs with graph optimisations off and at 'basic', and kills the
// process with a segmentation fault at 'all' (the default), on all-ones inputs. repro.onnx is that
// model (memo's minimal one: two recurrent layers, one unit each, without biases). Each level runs in a child process, so that the crash is shown, not suffered.
// Exits 1 while the fault shows.
'use strict';
const { spawnSync } = require('child_process');
const ort = require('onnxruntime-node');

if (process.argv[2]) {
  (async () => {
    const session = await ort.InferenceSession.create('repro.onnx', { graphOptimizationLevel: process.argv[2], logSeverityLevel: 4 });
    const feeds = {};
    for (const m of session.inputMetadata) {
      const n = m.shape.reduce((a, b) => a * b, 1);
      const ones = m.type === 'float16' ? new Uint16Array(n).fill(0x3c00) : new Float32Array(n).fill(1);
      feeds[m.name] = new ort.Tensor(m.type, ones, m.shape);
    }
    await session.run(feeds);
    console.log(`ran (inputs ${session.inputMetadata.map((m) => m.type)})`);
  })();
} else {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  let faults = 0;
  for (const level of ['disabled', 'basic', 'all']) {
    const r = spawnSync(process.execPath, [__filename, level], { encoding: 'utf8' });
    const said = r.signal ? `killed by ${r.signal}` : r.status === 0 ? r.stdout.trim() : `exit ${r.status}: ${r.stderr.trim().split('\n')[0]}`;
    console.log(`optimisation '${level}': ${said}`);
    if (r.status !== 0) ++faults;
  }
  process.exit(faults ? 1 : 0);
}
