#!/usr/bin/python3
"""Writes ONNX files as PyTorch's exporter writes them, for the import tests: torchvision's
classification families (residual, dense, inception-style fire, depthwise, grouped, squeeze-and-
excitation and channel-shuffle blocks) with random weights, and a GRU and a two-layer LSTM that
take their initial states as inputs. Needs Debian's python3-torchvision; downloads nothing.

usage: export_models.py OUT_DIR"""
import os
import sys

import torch
import torchvision.models as tvm

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(1)

vision = [
    ("resnet18", tvm.resnet18, 96),            # residual
    ("densenet121", tvm.densenet121, 96),      # dense (Concat of many)
    ("squeezenet1_0", tvm.squeezenet1_0, 96),  # fire modules, ceil_mode pooling
    ("mobilenet_v2", tvm.mobilenet_v2, 96),    # depthwise, Clip (ReLU6)
    ("regnet_y_400mf", tvm.regnet_y_400mf, 96),  # grouped convolutions, squeeze-and-excitation
    ("shufflenet_v2_x0_5", tvm.shufflenet_v2_x0_5, 96),  # channel split and shuffle
    ("mnasnet0_5", tvm.mnasnet0_5, 96),        # depthwise and inverted residuals
]
for name, make, size in vision:
    torch.onnx.export(make().eval(), torch.rand(1, 3, size, size), os.path.join(out, name + ".onnx"),
                      opset_version=13, input_names=["input"], output_names=["output"])


class Gru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(5, 9, batch_first=True)
        self.head = torch.nn.Linear(9, 2)

    def forward(self, x):
        h0 = torch.zeros(1, x.shape[0], 9)  # the initial state, as the exporter writes it
        y, _ = self.gru(x, h0)
        return self.head(y[:, -1])


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(3, 7, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(7, 4)

    def forward(self, x):
        zeros = torch.zeros(2, x.shape[0], 7)  # the initial states, as the exporter writes them
        y, _ = self.lstm(x, (zeros, zeros))
        return self.head(y[:, -1])


torch.onnx.export(Gru().eval(), torch.rand(1, 12, 5), os.path.join(out, "gru_zeros.onnx"),
                  opset_version=13, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})
torch.onnx.export(Lstm().eval(), torch.rand(1, 12, 3), os.path.join(out, "lstm2_zeros.onnx"),
                  opset_version=13, input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "batch"}})
