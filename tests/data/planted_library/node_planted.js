// Faults planted in Node packages for the tests of reproducers (tests/cli/reproduce.sh;
// sitecustomize.py plants them in Python libraries). Loaded with NODE_OPTIONS=--require <this
// file>, every Node that starts (memo's workers, and a reproducer run alone) gets, as a library
// with a wrong kernel would:
//   MEMO_PLANTED_FAULT=ort-outputs  an onnxruntime-node InferenceSession whose outputs are 1 % too
//                                   large (outputs that only pass an input through, yK beside an
//                                   input inK, are left as they are);
//   MEMO_PLANTED_FAULT=tfjs-dense   a tfjs-layers Dense layer whose outputs are 1 % too large;
//   MEMO_PLANTED_FAULT=tfjs-layers  every tfjs-layers layer's outputs 1 % too large, plus 0.01 (so
//                                   that zeros are wrong too).
// Without the variable nothing changes.
'use strict';
const fault = process.env.MEMO_PLANTED_FAULT;
if (fault === 'ort-outputs' || fault === 'tfjs-dense' || fault === 'tfjs-layers') {
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
    if (fault === 'tfjs-layers' && request === '@tensorflow/tfjs-layers' && !m.layers.Layer.prototype.plantedFault) {
      const tf = Module.createRequire(rest[0].filename)('@tensorflow/tfjs-core');
      const Layer = m.layers.Layer;
      const apply = Layer.prototype.apply;
      Layer.prototype.plantedFault = true;
      // Concrete outputs only: a model's construction applies its layers to symbolic tensors.
      const wrong = (y) => (y instanceof tf.Tensor && y.dtype === 'float32' ? tf.add(tf.mul(y, 1.01), 0.01) : y);
      Layer.prototype.apply = function (...args) {
        const y = apply.apply(this, args);
        return Array.isArray(y) ? y.map(wrong) : wrong(y);
      };
    }
    return m;
  };
}
