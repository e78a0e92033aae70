// What tfjs needs besides its packages to run memo's models. The worker calls both functions at
// its start; a reproducer holds their text (tools/tfjs-worker/reproducer.js), so that it needs
// nothing of memo.
'use strict';

// tfjs-core's CommonJS build leaves out the chained tensor methods (x.flatten(), x.add(y), ...)
// that its bundles register and tfjs-layers' recurrent layers call: each op becomes a method.
function addChainedOps(tf) {
  for (const [name, fn] of Object.entries(tf)) {
    if (typeof fn === 'function' && /^[a-z]/.test(name) && !(name in tf.Tensor.prototype)) {
      tf.Tensor.prototype[name] = function (...args) { return fn(this, ...args); };
    }
  }
  if (!tf.Tensor.prototype.flatten) {
    tf.Tensor.prototype.flatten = function () { return tf.reshape(this, [this.size]); };
  }
}

// memo's layers that Keras has no class for (MEMO's custom objects and memo's adapters), as tfjs
// layers of the same class names and meanings as memo's reference interpreter gives them. (tfjs
// hands a layer its config with camelCase keys: constant_values is constantValues.) Returns their
// class names.
function registerCustomLayers(tf, tfl, Declined) {
  class Elementwise extends tfl.layers.Layer {
    constructor(config) { super(config); this.config = config; }
    computeOutputShape(shape) { return shape; }
    getConfig() { return { ...super.getConfig(), ...this.own() }; }
    own() { return {}; }
    call(inputs) { return tf.tidy(() => this.f(Array.isArray(inputs) ? inputs[0] : inputs, inputs)); }
  }
  const custom = {
    Abs: (x) => tf.abs(x),
    Square: (x) => tf.mul(x, x),
    StopGradient: (x) => tf.clone(x),
    // The product is rounded to float32 before the shift is added, as memo's reference does.
    ScaleShift: (x, _, c) => tf.add(tf.mul(x, tf.scalar(c.scale ?? 1)), tf.scalar(c.shift ?? 0)),
    CustomCastLayer: (x, _, c) => {
      if ((c.targetDtype ?? 'float32') !== 'float32') throw new Declined('tfjs layers compute in float32 only, not ' + c.targetDtype);
      return tf.clone(x);
    },
    CustomScaleLayer: (_, inputs, c) => tf.add(inputs[0], tf.mul(inputs[1], tf.scalar(c.scale ?? 1))),
    CustomInjectLayer: (x, _, c) => {
      const fill = c.value === 'inf' ? Infinity : c.value === '-inf' ? -Infinity : NaN;
      const stride = Math.max(1, c.stride ?? 1);
      const mask = new Uint8Array(x.size);
      for (let i = 0; i < mask.length; i += stride) mask[i] = 1;
      return tf.where(tf.tensor(mask, x.shape, 'bool'), tf.fill(x.shape, fill), x);
    },
    CustomExpandLayer: (x, _, c) => tf.expandDims(x, c.axis ?? 1),
    // Index 0 along the axis, which goes.
    CustomDropDimLayer: (x, _, c) => {
      const axis = c.axis ?? 1;
      const begin = x.shape.map(() => 0);
      const size = x.shape.map((d, i) => (i === axis ? 1 : -1));
      return tf.squeeze(tf.slice(x, begin, size), [axis]);
    },
    // (before, after) for each non-batch dimension.
    CustomPadLayer: (x, _, c) => {
      const p = c.padding.flat();
      const pairs = [[0, 0]];
      for (let i = 0; i + 1 < p.length; i += 2) pairs.push([p[i], p[i + 1]]);
      return tf.pad(x, pairs, c.constantValues ?? 0);
    },
    CustomCropLayer: (x, _, c) => {
      const p = c.cropping.flat();
      const begin = [0], size = [-1];
      for (let i = 1; i < x.rank; ++i) {
        begin.push(p[2 * (i - 1)]);
        size.push(x.shape[i] - p[2 * (i - 1)] - p[2 * (i - 1) + 1]);
      }
      return tf.slice(x, begin, size);
    },
  };
  const shapeOf = {
    CustomScaleLayer: (s) => s[0],
    CustomExpandLayer: (s, c) => { const r = s.slice(); r.splice(c.axis ?? 1, 0, 1); return r; },
    CustomDropDimLayer: (s, c) => s.filter((_, i) => i !== (c.axis ?? 1)),
    CustomPadLayer: (s, c) => s.map((d, i) => (i === 0 || d == null ? d : d + c.padding.flat()[2 * (i - 1)] + c.padding.flat()[2 * (i - 1) + 1])),
    CustomCropLayer: (s, c) => s.map((d, i) => (i === 0 || d == null ? d : d - c.cropping.flat()[2 * (i - 1)] - c.cropping.flat()[2 * (i - 1) + 1])),
  };
  for (const [name, f] of Object.entries(custom)) {
    const cls = class extends Elementwise {
      f(x, inputs) { return f(x, inputs, this.config); }
      computeOutputShape(s) { return shapeOf[name] ? shapeOf[name](s, this.config) : Array.isArray(s[0]) ? s[0] : s; }
      static get className() { return name; }
    };
    tf.serialization.registerClass(cls);
  }
  return Object.keys(custom);
}

module.exports = { addChainedOps, registerCustomLayers };
