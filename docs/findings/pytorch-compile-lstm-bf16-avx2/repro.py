# PyTorch 2.13 (CPU), torch.compile: a bfloat16 LSTM that runs eagerly fails compiled, with
# "could not create a primitive descriptor for the LSTM forward propagation primitive", on a CPU
# whose oneDNN has no bfloat16 (AVX2, no AVX512-BF16 or AMX). Eager aten::lstm takes oneDNN's
# kernel for bfloat16 only where mkldnn_bf16_device_check() passes, else its own; the LSTM
# decomposition Inductor uses (torch/_decomp/decompositions.py, lstm_impl's use_mkldnn) accepts
# bfloat16 without that check and calls mkldnn_rnn_layer. Keras' LSTM on bfloat16 inputs, lowered
# to torch.lstm, fails so under torch.compile. Exits 1 while the fault shows.
import sys

import torch

print("torch", torch.__version__, "- oneDNN bfloat16 on this CPU:", torch.ops.mkldnn._is_mkldnn_bf16_supported())
torch.manual_seed(0)
batch, steps, features, units = 2, 1, 65, 21
x = torch.randn(batch, steps, features).bfloat16()
params = [torch.randn(4 * units, features).bfloat16(), torch.randn(4 * units, units).bfloat16(), torch.randn(4 * units).bfloat16(),
          torch.zeros(4 * units).bfloat16()]
h0 = torch.zeros(1, batch, units, dtype=torch.bfloat16)


def lstm(x):
    return torch.lstm(x, (h0, h0), params, True, 1, 0.0, False, False, True)[0]


eager = lstm(x)
print("eager: output", list(eager.shape))
try:
    compiled = torch.compile(lstm, fullgraph=True)(x)
except RuntimeError as e:
    print("torch.compile fails:", str(e).splitlines()[0])
    sys.exit(1)
print("torch.compile: output", list(compiled.shape), "largest difference from eager", float((compiled.float() - eager.float()).abs().max()))
sys.exit(0)
