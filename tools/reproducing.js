// What memo's Node.js workers share to write a bug's reproducer (tools/ort-worker/reproducer.js,
// tools/tfjs-worker/reproducer.js; docs/reproducers.md), as tools/reproducing.py is for the Python
// ones: the request's reproducer part, tensors as JSON that rounds nothing, the code every script
// shares, and the command that runs one from its folder as a maintainer would.
'use strict';
const path = require('path');

/// The reproducer part of a Keras-JSON request (mode 3), after the run's fields: the folder, the
/// file stem, the title and the checks, each {node, expected, bound} (expected float32).
function readRequest(r) {
  const q = { directory: r.str(), stem: r.str(), title: r.str(), checks: [] };
  for (let n = r.u32(); n > 0; --n) q.checks.push({ node: r.u32(), expected: r.tensor(), bound: r.f64() });
  return q;
}

/// A tensor ({dims, data: a Float32Array or Float64Array}) as JSON: its bytes in base64.
function tensorJson(t) {
  const values = t.data;
  return { type: values instanceof Float64Array ? 'float64' : 'float32', dims: t.dims, data: Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64') };
}

// The code each script starts with: reading tensorJson back, and the check it ends with.
const PRELUDE = `const array = (t) => {
  const raw = Buffer.from(t.data, 'base64');
  const Type = t.type === 'float64' ? Float64Array : Float32Array;
  return new Type(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
};

// Whether got ({dims, data}) differs from expected by more than bound anywhere (a NaN or an
// infinity where the other has none counts as any difference); prints the largest difference.
function differs(name, got, expected, bound, show = true) {
  if (got.dims.join(',') !== expected.dims.join(',')) {
    if (show) console.log(\`\${name}: shape [\${got.dims}], expected [\${expected.dims}]\`);
    return true;
  }
  const want = array(expected);
  let worst = 0, at = 0;
  for (let i = 0; i < want.length; ++i) {
    const g = Number(got.data[i]), e = want[i];
    const d = g === e || (Number.isNaN(g) && Number.isNaN(e)) ? 0 : Math.abs(g - e);
    const diff = Number.isNaN(d) ? Infinity : d;
    if (diff > worst) worst = diff, at = i;
  }
  if (show) console.log(\`\${name}: largest difference \${worst} at flat index \${at} (\${got.data[at]} against \${want[at]}); rounding allows \${bound}\`);
  return worst > bound;
}

// Calls the model up to RUNS times on the same inputs and returns check(outputs, show) of the first
// run at fault (of the last where none is): a kernel that reads memory it never wrote answers right
// on a fresh heap and wrong once the library reuses memory it freed.
const RUNS = 3;
async function checkedRuns(call, check) {
  for (let k = 0; ; ++k) {
    const got = await call();
    if (k === RUNS - 1 || (await check(got, false)).some((f) => f)) {
      if (k) console.log(\`run \${k + 1} of \${RUNS}:\`);
      return check(got, true);
    }
  }
}
`;

/// Fills {name} fields of a script's template (a function, so that a '$' in a title stays).
function fill(template, fields) {
  return template.replace(/\{(\w+)\}/g, (all, k) => (k in fields ? String(fields[k]) : all));
}

// A reproducer exits 1 while the fault shows, and so does Node on an error nobody catches: the
// script runs under this harness, which makes its own failure exit 2, not a fault shown.
const HARNESS = "process.on('uncaughtException', (e) => { console.error(e); console.error(String(e)); process.exit(2); });\n" +
  "require(require('path').resolve(process.argv[1]));";

/// How memo runs a reproducer, as the worker's answer: this Node, the harness and the script, from
/// the script's folder, its packages found beside the worker that wrote it (`modules`).
/// oracle/reproducers.hpp judges its exit status and keeps its output beside it (STEM.out).
function command(script, modules) {
  return JSON.stringify({ script: path.resolve(script), argv: [process.execPath, '-e', HARNESS, path.basename(script)], env: { NODE_PATH: modules } });
}

module.exports = { readRequest, tensorJson, PRELUDE, fill, command };
