# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""Efficient Attention (Shen et al., cmsflash/efficient-attention; docs/linear_attention.md, KernelizedAttention
SoftmaxPair) with the official module and parameter names, and the ViT it runs in.

`EfficientAttention` is the official module: 1×1 convs `keys`, `queries` (key_channels) and `values`
(value_channels) on [B,C,H,W], per head the keys softmaxed over positions and the queries over the head's
channels, context = key @ valueᵀ, contextᵀ @ query, heads concatenated, `reprojection` 1×1 conv, plus the input
(the residual is inside the module). `GridAttention` runs it on a ViT's [B,N,C] patch tokens laid out as the
H×W grid, and `PatchTokenViT` is the DeiT reference without a class token, mean-pooling its tokens for the head
(docs/models.md §7.8: Efficient Attention is defined on a grid, so its ViT has no class token).
"""
import torch
import torch.nn as nn
import torch.nn.functional as f

from .deit import VisionTransformer


class EfficientAttention(nn.Module):
    def __init__(self, in_channels, key_channels, head_count, value_channels):
        super().__init__()
        self.in_channels = in_channels
        self.key_channels = key_channels
        self.head_count = head_count
        self.value_channels = value_channels
        self.keys = nn.Conv2d(in_channels, key_channels, 1)
        self.queries = nn.Conv2d(in_channels, key_channels, 1)
        self.values = nn.Conv2d(in_channels, value_channels, 1)
        self.reprojection = nn.Conv2d(value_channels, in_channels, 1)

    def forward(self, input_):
        n, _, h, w = input_.size()
        keys = self.keys(input_).reshape((n, self.key_channels, h * w))
        queries = self.queries(input_).reshape(n, self.key_channels, h * w)
        values = self.values(input_).reshape((n, self.value_channels, h * w))
        head_key_channels = self.key_channels // self.head_count
        head_value_channels = self.value_channels // self.head_count
        attended_values = []
        for i in range(self.head_count):
            key = f.softmax(keys[:, i * head_key_channels:(i + 1) * head_key_channels, :], dim=2)
            query = f.softmax(queries[:, i * head_key_channels:(i + 1) * head_key_channels, :], dim=1)
            value = values[:, i * head_value_channels:(i + 1) * head_value_channels, :]
            context = key @ value.transpose(1, 2)
            attended_value = (context.transpose(1, 2) @ query).reshape(n, head_value_channels, h, w)
            attended_values.append(attended_value)
        aggregated_values = torch.cat(attended_values, dim=1)
        reprojected_value = self.reprojection(aggregated_values)
        attention = reprojected_value + input_
        return attention


class GridAttention(nn.Module):
    """[B, H·W, C] tokens -> [B, C, H, W] -> EfficientAttention -> [B, H·W, C] (its key names under `attn`)."""

    def __init__(self, dim, heads, grid, key_channels=None, value_channels=None):
        super().__init__()
        self.grid = grid
        self.attn = EfficientAttention(dim, key_channels or dim, heads, value_channels or dim)

    def forward(self, x):
        B, N, C = x.shape
        y = self.attn(x.transpose(1, 2).reshape(B, C, self.grid[0], self.grid[1]))
        return y.flatten(2).transpose(1, 2)


class PatchTokenViT(VisionTransformer):
    """deit.VisionTransformer without a class token: position embedding over the patches only, and the head on
    the mean of the final tokens."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        del self.cls_token
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches, self.embed_dim))

    def forward_features(self, x):
        x = self.patch_embed(x) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)

    def forward(self, x):
        return self.head(self.forward_features(x).mean(dim=1))


def efficient_attention_factory(grid, key_channels=None, value_channels=None):
    """attn_factory for PatchTokenViT: GridAttention over the patch grid (H, W)."""
    return lambda dim, heads: GridAttention(dim, heads, grid, key_channels, value_channels)
