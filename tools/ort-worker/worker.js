#!/usr/bin/env node
// memo's ONNX Runtime worker. It reads run requests from fd 3 and writes results to fd 4, one at
// a time, until fd 3 closes. Each frame is a little-endian u64 length and a payload:
//
//   request  u64 onnx length, onnx bytes,
//            u32 inputs,  each: str name, u8 type (0 float32, 1 float64), u32 rank, i64 dims, data
//            u32 outputs, each: str name
//            and, for a reproducer (reproducer.js) rather than a run: str directory, str stem,
//            str title, and for each output: u8 checked, if checked the values expected (u32 rank,
//            i64 dims, float64 data) and f64 the most rounding explains
//   result   u8 status (0 ok, 1 error, 2 declined: a kernel ONNX Runtime lacks for an operator and
//            dtype), f64 milliseconds (session creation and run), str message, u32 outputs, each:
//            u8 type (0 float32, 1 float64), u32 rank, i64 dims, data; f64 the milliseconds of
//            session creation (ONNX Runtime's compiling: checks, graph rewriting, kernels chosen)
//            (a reproducer's answer: status 0, what running it printed, no outputs)
//
// tools/onnx-worker/worker.py speaks the same frames for the Python libraries that take ONNX.
//
// (str: u32 length and UTF-8 bytes.) Usage: node worker.js [--optimize disabled|basic|extended|all]
'use strict';
const { Reader, dimsHeader, answer, serveFrames } = require('../frames.js');
// ONNX Runtime 1.30's telemetry (on by default on Linux) reads the machine's id, uploads session
// events and leaves a /tmp/mat-debug-<pid>.log in each worker process (docs/findings.md): off,
// before the library reads the setting at its first session.
process.env.ORT_DISABLE_TELEMETRY = '1';
const ort = require('onnxruntime-node');
const reproducer = require('./reproducer.js');
const version = require('onnxruntime-node/package.json').version;

const level = (() => {
  const i = process.argv.indexOf('--optimize');
  return i >= 0 ? process.argv[i + 1] : 'disabled';
})();
const options = {
  graphOptimizationLevel: level,
  executionMode: 'sequential',
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  // No arena and no memory pattern: a session lives for one run, and both roughly double the time
  // it takes to create one (and the arena would hide a kernel's own allocations from memory figures).
  enableCpuMemArena: false,
  enableMemPattern: false,
  logSeverityLevel: 3,
};

function decode(frame) {
  const r = new Reader(frame);
  const model = r.bytes(r.u64());
  const feeds = {};
  for (let n = r.u32(); n > 0; --n) {
    const name = r.str();
    const type = r.u8();
    const dims = r.dims();
    const data = r.floats(dims.reduce((a, b) => a * b, 1), type === 1 ? 8 : 4);
    feeds[name] = new ort.Tensor(type === 1 ? 'float64' : 'float32', data, dims);
  }
  const outputs = [];
  for (let n = r.u32(); n > 0; --n) outputs.push(r.str());
  if (r.at === r.buf.length) return { model, feeds, outputs };
  const repro = { directory: r.str(), stem: r.str(), title: r.str(), outputs: [] };
  for (const name of outputs) {
    if (!r.u8()) {
      repro.outputs.push({ name });
      continue;
    }
    const dims = r.dims();
    const expected = { dims, data: r.floats(dims.reduce((a, b) => a * b, 1), 8) };
    repro.outputs.push({ name, expected, bound: r.f64() });
  }
  return { model, feeds, outputs, repro };
}

// Whether an error is ONNX Runtime lacking a kernel for an operator and dtype: a model it declines.
function declines(message) {
  return message.includes('Could not find an implementation') || message.includes('NOT_IMPLEMENTED') ||
    (message.includes('does not support') && message.includes(' yet'));
}

function encode(status, ms, message, tensors, compileMs = 0) {
  const text = Buffer.from(message, 'utf8');
  const head = Buffer.alloc(1 + 8 + 4 + text.length + 4);
  head.writeUInt8(status, 0);
  head.writeDoubleLE(ms, 1);
  head.writeUInt32LE(text.length, 9);
  text.copy(head, 13);
  head.writeUInt32LE(tensors.length, 13 + text.length);
  const parts = [head];
  for (const t of tensors) {
    // float32 and float64 go as they are (the campaign widens float32); any other type as float64.
    const values = t.data instanceof Float64Array || t.data instanceof Float32Array ? t.data : new Float64Array(t.data);
    parts.push(Buffer.from([values instanceof Float32Array ? 0 : 1]), dimsHeader(t.dims));
    parts.push(Buffer.from(values.buffer, values.byteOffset, values.byteLength));
  }
  const compiling = Buffer.alloc(8);
  compiling.writeDoubleLE(compileMs, 0);
  parts.push(compiling);
  return parts;
}

async function serve(frame) {
  const start = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - start) / 1e6;
  let session = null;
  try {
    const q = decode(frame);
    if (q.repro) {
      const { directory, stem, title, outputs } = q.repro;
      const script = reproducer.write(directory, stem, title, q.model, q.feeds, outputs, level, version);
      answer(encode(0, ms(), reproducer.command(script), []));
      return;
    }
    session = await ort.InferenceSession.create(q.model, options);
    const created = ms();
    const result = await session.run(q.feeds, q.outputs);
    answer(encode(0, ms(), '', q.outputs.map((name) => result[name]), created));
  } catch (e) {
    const message = String(e && e.message ? e.message : e);
    answer(encode(declines(message) ? 2 : 1, ms(), message, []));
  }
  // Released after the answer is on its way: the campaign need not wait for it.
  if (session) await session.release().catch(() => {});
}

serveFrames(serve);
