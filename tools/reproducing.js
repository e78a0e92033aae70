// What memo's Node.js workers share to write a bug's reproducer (tools/ort-worker/reproducer.js,
// tools/tfjs-worker/reproducer.js; docs/reproducers.md), as tools/reproducing.py is for the Python
// ones: the request's reproducer part, tensors as JSON that rounds nothing, the code every script
// shares, and running one from its folder as a maintainer would.
'use strict';
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

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
function differs(name, got, expected, bound) {
  if (got.dims.join(',') !== expected.dims.join(',')) {
    console.log(\`\${name}: shape [\${got.dims}], expected [\${expected.dims}]\`);
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
  console.log(\`\${name}: largest difference \${worst} at flat index \${at} (\${got.data[at]} against \${want[at]}); rounding allows \${bound}\`);
  return worst > bound;
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

/// Runs a reproducer from its folder (its packages found beside the worker that wrote it, in
/// `modules`): whether it shows the fault, and the last line it printed. All it printed goes
/// beside it (STEM.out), for the bug's report.
function run(script, modules) {
  const env = { ...process.env, NODE_PATH: modules };
  const p = spawnSync(process.execPath, ['-e', HARNESS, path.basename(script)], { cwd: path.dirname(script), env, encoding: 'utf8', timeout: 600000 });
  if (p.error) return `does not finish: ${p.error.message}`;
  fs.writeFileSync(script.replace(/\.js$/, '.out'), (p.stdout || '') + (p.stderr || ''));
  const said = (p.stdout || '').split('\n').filter((l) => l.trim());
  const last = said.length ? said[said.length - 1] : ((p.stderr || '').trim().split('\n').pop() || '');
  const verdict = { 1: 'shows the fault', 0: 'does not show the fault' }[p.status] || 'fails';
  return `${verdict} (exit ${p.status}): ${last}`;
}

module.exports = { readRequest, tensorJson, PRELUDE, fill, run };
