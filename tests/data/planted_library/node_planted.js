// Faults planted in Node packages for the tests of reproducers (tests/cli/reproduce.sh;
// sitecustomize.py plants them in Python libraries). Loaded with NODE_OPTIONS=--require <this
// file>, every Node that starts (memo's workers, and a reproducer run alone) gets, as a library
// with a wrong kernel would:
//   MEMO_PLANTED_FAULT=ort-outputs  an onnxruntime-node InferenceSession whose outputs are 1 % too
//                                   large (outputs that only pass an input through, yK beside an
//                                   input inK, are left as they are);
//   MEMO_PLANTED_FAULT=tfjs-dense   a tfjs-layers Dense layer whose outputs are 1 % too large.
// Without the variable nothing changes.
'use strict';
const fault = process.env.MEMO_PLANTED_FAULT;
if (fault === 'ort-outputs' || fault === 'tfjs-dense') {
  const Module = require('module');
  const load = Module._load;
  Module._load = function (request, ...rest) {
    const m = load.call(this, request, ...rest);
    if (fault === 'ort-outputs' && request === 'onnxruntime-node' && !m.InferenceSession.prototype.plantedFault) {
      const proto = m.InferenceSession.prototype;
      const run = proto.run;
      proto.plantedFault = true;
      proto.run = async function (...args) {
        const out = await run.apply(this, args);
        const passed = new Set(this.inputNames.map((n) => 'y' + n.slice(2)));
        for (const [name, t] of Object.entries(out))
          if (!passed.has(name) && (t.data instanceof Float32Array || t.data instanceof Float64Array))
            for (let i = 0; i < t.data.length; ++i) t.data[i] *= 1.01;
        return out;
      };
    }
    if (fault === 'tfjs-dense' && request === '@tensorflow/tfjs-layers') {
      const tf = Module.createRequire(rest[0].filename)('@tensorflow/tfjs-core');  // the requiring package's
      const entry = tf.serialization.SerializationMap.getMap().classNameMap.Dense;
      const Dense = entry && entry[0];
      if (Dense && !Dense.prototype.plantedFault) {
        const call = Dense.prototype.call;
        Dense.prototype.plantedFault = true;
        Dense.prototype.call = function (...args) { return tf.mul(call.apply(this, args), 1.01); };
      }
    }
    return m;
  };
}
