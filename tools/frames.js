// The framing memo's Node.js workers share (tools/ort-worker, tools/tfjs-worker): requests arrive
// on fd 3 and answers leave on fd 4, each a little-endian u64 length and a payload. Strings are a
// u32 length and UTF-8 bytes; a tensor is a u32 rank, i64 dims and float32 values.
'use strict';
const fs = require('fs');
const net = require('net');

/// Reads a request's fields in order.
class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  u8() { const v = this.buf.readUInt8(this.at); this.at += 1; return v; }
  u32() { const v = this.buf.readUInt32LE(this.at); this.at += 4; return v; }
  i64() { const v = Number(this.buf.readBigInt64LE(this.at)); this.at += 8; return v; }
  u64() { const v = Number(this.buf.readBigUInt64LE(this.at)); this.at += 8; return v; }
  f64() { const v = this.buf.readDoubleLE(this.at); this.at += 8; return v; }
  bytes(n) {
    if (this.at + n > this.buf.length) throw new Error('truncated request');
    const v = this.buf.subarray(this.at, this.at + n); this.at += n; return v;
  }
  str() { return this.bytes(this.u32()).toString('utf8'); }
  dims() {
    const d = [];
    for (let k = this.u32(); k > 0; --k) d.push(this.i64());
    return d;
  }
  // `count` values of 4 or 8 bytes, copied: a typed array needs an offset that is a multiple of its size.
  floats(count, size = 4) {
    const raw = Buffer.from(this.bytes(count * size));
    return size === 8 ? new Float64Array(raw.buffer, raw.byteOffset, count) : new Float32Array(raw.buffer, raw.byteOffset, count);
  }
  tensor() {
    const dims = this.dims();
    return { dims, data: this.floats(dims.reduce((a, b) => a * b, 1)) };
  }
}

/// The header of a tensor in an answer: u32 rank and i64 dims.
function dimsHeader(dims) {
  const h = Buffer.alloc(4 + 8 * dims.length);
  h.writeUInt32LE(dims.length, 0);
  dims.forEach((d, i) => h.writeBigInt64LE(BigInt(d), 4 + 8 * i));
  return h;
}

/// Writes an answer of the given parts, with its length in front, whole (the pipe may be full).
function answer(parts) {
  const body = Buffer.concat(parts);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(body.length), 0);
  const buf = Buffer.concat([len, body]);
  let at = 0;
  while (at < buf.length) {
    try {
      at += fs.writeSync(4, buf, at, buf.length - at);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

/// Calls serve(frame) for each request, one after the other, and exits when fd 3 closes. Frames
/// arrive in chunks (64 KiB from a pipe); they are joined once a whole frame is there, not chunk by
/// chunk, which would copy a large model's bytes over and over. fd 3 is read as a socket (epoll),
/// not a file stream (reads through libuv's thread pool, with a hop per chunk).
function serveFrames(serve) {
  let chunks = [];
  let buffered = 0;
  let busy = Promise.resolve();
  const input = new net.Socket({ fd: 3, readable: true, writable: false });
  input.on('data', (chunk) => {
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (buffered < 8) return;
      if (chunks[0].length < 8) chunks = [Buffer.concat(chunks)];
      const n = Number(chunks[0].readBigUInt64LE(0));
      if (buffered < 8 + n) return;
      const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const frame = Buffer.from(all.subarray(8, 8 + n));
      const rest = all.subarray(8 + n);
      chunks = rest.length ? [rest] : [];
      buffered = rest.length;
      busy = busy.then(() => serve(frame));
    }
  });
  input.on('end', () => busy.then(() => process.exit(0)));
  input.on('close', () => busy.then(() => process.exit(0)));
  input.on('error', () => process.exit(0));
}

module.exports = { Reader, dimsHeader, answer, serveFrames };
