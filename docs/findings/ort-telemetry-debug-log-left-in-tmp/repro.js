// ONNX Runtime 1.30 (onnxruntime-node, Linux): each process that creates a session leaves an empty
// file /tmp/mat-debug-<pid>.log behind, which nothing removes: the debug log of the telemetry SDK
// that 1.30 added on POSIX. A test suite or a fuzzing campaign that starts many processes fills
// /tmp with them (435 after one run of memo's tests). ORT_DISABLE_TELEMETRY=1 avoids it. This
// script runs a child process that creates one session (model.onnx: one MaxPool) and exits, then
// looks for the child's file. Exits 1 while the fault shows.
'use strict';
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

if (process.argv[2] === 'child') {
  const ort = require('onnxruntime-node');
  ort.InferenceSession.create(path.join(__dirname, 'model.onnx')).then(() => process.exit(0));
} else {
  const child = spawnSync(process.execPath, [__filename, 'child'], { stdio: 'inherit', env: process.env });
  const left = path.join(os.tmpdir(), `mat-debug-${child.pid}.log`);
  const version = require('onnxruntime-node/package.json').version;
  if (fs.existsSync(left)) {
    console.log(`onnxruntime-node ${version}: the child process (pid ${child.pid}, exit ${child.status}) left ${left} (${fs.statSync(left).size} bytes)`);
    fs.unlinkSync(left);
    process.exit(1);
  }
  console.log(`onnxruntime-node ${version}: the child process (pid ${child.pid}, exit ${child.status}) left no file in ${os.tmpdir()}`);
  process.exit(0);
}
