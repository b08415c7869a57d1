"""Squeeze-and-excitation and Selective Kernel modules as their official code writes them, with the official
key names (docs/linear_attention.md "SE and SK"): the ground truth for the engine's SelectiveKernel op and
the planner's fuse_selective_kernel / fuse_squeeze_excite passes. No timm dependency.

  SKModule             the attention survey's sk_module.py (Guo et al., Jittor; here in PyTorch): branch i a
                       3x3 conv with dilation 1+i, groups G, no bias -> BN -> ReLU; z = ReLU(BN(1x1 conv, no
                       bias)); per-branch 1x1 select convs with bias; softmax over the M branches.
  SKAttention          xmu's External-Attention-pytorch SKAttention: branches Conv2d(k, padding k//2, bias) ->
                       BN -> ReLU for k in kernels; Z = Linear(C -> d) with no BN or activation; per-branch
                       Linear(d -> C); softmax over branches (dim 0 of the stacked weights).
  SelectiveKernel      timm's SelectiveKernel (split_input, keep_3x3: 3x3 convs with dilation in place of 5x5)
                       with SelectiveKernelAttn: fc_reduce 1x1 (no bias) -> BN -> ReLU -> fc_select 1x1 to
                       C·paths (no bias) -> softmax over paths.
  SEAttention          the survey's / xmu's SE: Linear layers without bias (keys fc.0, fc.2), r = 16.
  SEModule             timm's SEModule: fc1 / fc2 Conv2d 1x1 with bias, rd = make_divisible(C/16, 8).
"""
from collections import OrderedDict

import torch
import torch.nn as nn


def make_divisible(v, divisor=8, min_value=None, round_limit=.9):
    """timm's make_divisible: never below `divisor` (C = 64 and 128 both reduce to 8 at 1/16)."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class SKModule(nn.Module):
    def __init__(self, features, M=2, G=32, r=16, stride=1, L=32):
        super().__init__()
        d = max(int(features / r), L)
        self.M = M
        self.features = features
        self.convs = nn.ModuleList([])
        for i in range(M):
            self.convs.append(nn.Sequential(
                nn.Conv2d(features, features, kernel_size=3, stride=stride, padding=1 + i, dilation=1 + i,
                          groups=G, bias=False),
                nn.BatchNorm2d(features),
                nn.ReLU(inplace=False)))
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Sequential(nn.Conv2d(features, d, kernel_size=1, stride=1, bias=False),
                                nn.BatchNorm2d(d),
                                nn.ReLU(inplace=False))
        self.fcs = nn.ModuleList([])
        for i in range(M):
            self.fcs.append(nn.Conv2d(d, features, kernel_size=1, stride=1))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        batch_size = x.shape[0]
        feats = [conv(x) for conv in self.convs]
        feats = torch.cat(feats, dim=1)
        feats = feats.view(batch_size, self.M, self.features, feats.shape[2], feats.shape[3])
        feats_U = torch.sum(feats, dim=1)
        feats_S = self.gap(feats_U)
        feats_Z = self.fc(feats_S)
        attention_vectors = [fc(feats_Z) for fc in self.fcs]
        attention_vectors = torch.cat(attention_vectors, dim=1)
        attention_vectors = attention_vectors.view(batch_size, self.M, self.features, 1, 1)
        attention_vectors = self.softmax(attention_vectors)
        feats_V = torch.sum(feats * attention_vectors, dim=1)
        return feats_V


class SKAttention(nn.Module):
    def __init__(self, channel=512, kernels=(1, 3, 5, 7), reduction=16, group=1, L=32):
        super().__init__()
        self.d = max(L, channel // reduction)
        self.convs = nn.ModuleList([])
        for k in kernels:
            self.convs.append(nn.Sequential(OrderedDict([
                ('conv', nn.Conv2d(channel, channel, kernel_size=k, padding=k // 2, groups=group)),
                ('bn', nn.BatchNorm2d(channel)),
                ('relu', nn.ReLU()),
            ])))
        self.fc = nn.Linear(channel, self.d)
        self.fcs = nn.ModuleList([])
        for i in range(len(kernels)):
            self.fcs.append(nn.Linear(self.d, channel))
        self.softmax = nn.Softmax(dim=0)

    def forward(self, x):
        bs, c, _, _ = x.size()
        conv_outs = []
        for conv in self.convs:
            conv_outs.append(conv(x))
        feats = torch.stack(conv_outs, 0)  # k, bs, channel, h, w
        U = sum(conv_outs)  # bs, c, h, w
        S = U.mean(-1).mean(-1)  # bs, c
        Z = self.fc(S)  # bs, d
        weights = []
        for fc in self.fcs:
            weight = fc(Z)
            weights.append(weight.view(bs, c, 1, 1))
        attention_weights = torch.stack(weights, 0)  # k, bs, channel, 1, 1
        attention_weights = self.softmax(attention_weights)
        V = (attention_weights * feats).sum(0)
        return V


class ConvNormAct(nn.Module):
    """timm's ConvNormAct (keys conv.*, bn.*): conv without bias, BatchNorm, ReLU; timm's symmetric padding."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, dilation=1, groups=1):
        super().__init__()
        padding = ((stride - 1) + dilation * (kernel_size - 1)) // 2
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                              bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class SelectiveKernelAttn(nn.Module):
    def __init__(self, channels, num_paths=2, attn_channels=32):
        super().__init__()
        self.num_paths = num_paths
        self.fc_reduce = nn.Conv2d(channels, attn_channels, kernel_size=1, bias=False)
        self.bn = nn.BatchNorm2d(attn_channels)
        self.act = nn.ReLU(inplace=True)
        self.fc_select = nn.Conv2d(attn_channels, channels * num_paths, kernel_size=1, bias=False)

    def forward(self, x):
        assert x.shape[1] == self.num_paths
        x = x.sum(1).mean((2, 3), keepdim=True)
        x = self.fc_reduce(x)
        x = self.bn(x)
        x = self.act(x)
        x = self.fc_select(x)
        B, C, H, W = x.shape
        x = x.view(B, self.num_paths, C // self.num_paths, H, W)
        x = torch.softmax(x, dim=1)
        return x


class SelectiveKernel(nn.Module):
    def __init__(self, in_channels, out_channels=None, kernel_size=None, stride=1, dilation=1, groups=1,
                 rd_ratio=1. / 16, rd_channels=None, rd_divisor=8, keep_3x3=True, split_input=True):
        super().__init__()
        out_channels = out_channels or in_channels
        kernel_size = kernel_size or [3, 5]
        if not isinstance(kernel_size, list):
            kernel_size = [kernel_size] * 2
        if keep_3x3:
            dilation = [dilation * (k - 1) // 2 for k in kernel_size]
            kernel_size = [3] * len(kernel_size)
        else:
            dilation = [dilation] * len(kernel_size)
        self.num_paths = len(kernel_size)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.split_input = split_input
        if self.split_input:
            assert in_channels % self.num_paths == 0
            in_channels = in_channels // self.num_paths
        groups = min(out_channels, groups)
        self.paths = nn.ModuleList([
            ConvNormAct(in_channels, out_channels, kernel_size=k, stride=stride, dilation=d, groups=groups)
            for k, d in zip(kernel_size, dilation)])
        attn_channels = rd_channels or make_divisible(out_channels * rd_ratio, divisor=rd_divisor)
        self.attn = SelectiveKernelAttn(out_channels, self.num_paths, attn_channels)

    def forward(self, x):
        if self.split_input:
            x_split = torch.split(x, self.in_channels // self.num_paths, 1)
            x_paths = [op(x_split[i]) for i, op in enumerate(self.paths)]
        else:
            x_paths = [op(x) for op in self.paths]
        x = torch.stack(x_paths, dim=1)
        x_attn = self.attn(x)
        x = x * x_attn
        x = torch.sum(x, dim=1)
        return x


class SEAttention(nn.Module):
    """The survey's se_module.py / xmu's SEAttention: Linear layers without bias."""

    def __init__(self, channel=512, reduction=16):
        super().__init__()
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(
            nn.Linear(channel, channel // reduction, bias=False),
            nn.ReLU(inplace=True),
            nn.Linear(channel // reduction, channel, bias=False),
            nn.Sigmoid())

    def forward(self, x):
        b, c, _, _ = x.size()
        y = self.avg_pool(x).view(b, c)
        y = self.fc(y).view(b, c, 1, 1)
        return x * y.expand_as(x)


class SEModule(nn.Module):
    """timm's SEModule (no norm, ReLU, sigmoid gate)."""

    def __init__(self, channels, rd_ratio=1. / 16, rd_channels=None, rd_divisor=8, bias=True):
        super().__init__()
        if not rd_channels:
            rd_channels = make_divisible(channels * rd_ratio, rd_divisor, round_limit=0.)
        self.fc1 = nn.Conv2d(channels, rd_channels, kernel_size=1, bias=bias)
        self.bn = nn.Identity()
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd_channels, channels, kernel_size=1, bias=bias)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.fc1(x_se)
        x_se = self.act(self.bn(x_se))
        x_se = self.fc2(x_se)
        return x * self.gate(x_se)
