// ONNX Runtime (onnxruntime-node, CPU): with graph optimisations at level 'extended' and above (the
// default is 'all'), the transpose optimiser pushes an NCHW<->NHWC Transpose pair through a linear
// Resize and permutes its scales, without checking that ORT's own CPU Resize kernel supports the
// result: scales [1,1,2,5] (allowed: outermost two are 1) become [1,5,1,2] (rejected), and session
// creation fails with "'Linear' mode only supports ..." for a valid model that runs unoptimised.
// repro.onnx: Transpose(perm 0,2,3,1) -> Resize(linear, half_pixel, scales [1,1,2,5]) ->
// Transpose(perm 0,3,1,2) of a 1x1x1x2 input. Exits 1 while the fault shows.
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  console.log(`onnxruntime-node ${require('onnxruntime-node/package.json').version}`);
  const x = new ort.Tensor('float32', new Float32Array([1, 2]), [1, 1, 1, 2]);
  // width 2 -> 4 (half_pixel: source positions -0.25, 0.25, 0.75, 1.25, clamped); 1 channel -> 5
  const want = [].concat(...Array(5).fill([1, 1.25, 1.75, 2]));
  let faults = 0;
  for (const level of ['disabled', 'basic', 'extended', 'all']) {
    let got;
    try {
      const session = await ort.InferenceSession.create('repro.onnx', { graphOptimizationLevel: level, logSeverityLevel: 4 });
      got = Array.from((await session.run({ x })).y.data);
    } catch (e) {
      const m = String(e.message);
      got = `session creation fails: ${m.includes("'Linear' mode only supports") ? '"\'Linear\' mode only supports: ..."' : m}`;
    }
    const ok = Array.isArray(got) && got.length === want.length && got.every((v, i) => Math.abs(v - want[i]) < 1e-6);
    console.log(`optimisation '${level}': ${Array.isArray(got) ? `[${got}]` : got}${ok ? '' : `; expected [${want}]`}`);
    if (!ok) ++faults;
  }
  process.exit(faults ? 1 : 0);
})();
