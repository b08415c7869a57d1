"""Nyströmformer attention (docs/linear_attention.md, Nyströmformer) as the official code writes it
(mlpen/Nystromformer: LRA/code/attention.py's `Attention` wrapper around attention_nystrom.py's
`NystromAttention`; the landmark rule for N % m != 0 from ImageNet/T2T-ViT/models/token_nystromformer.py).

State_dict keys are the official wrapper's: W_q, W_k, W_v (Linear C -> C with bias), attn.conv (the optional
depthwise V conv [h,1,ks,1], no bias), ff (the output Linear). No mask: every token is valid in a ViT.

    from functools import partial
    VisionTransformer(..., attn_factory=partial(NystromBlockAttention, num_landmarks=4, conv_kernel_size=3))
"""
import math

import torch
import torch.nn as nn


class NystromAttention(nn.Module):
    """The official kernel on Q, K, V [B,h,N,d]. init_option "original": one max over batch and heads (the
    LRA code's effective choice); "exact": per (b, h) (the T2T-ViT default). scales: "lra" divides Q and K by
    d^(1/4); "t2t" divides Q by sqrt(d) and leaves K."""

    def __init__(self, head_dim, num_head, num_landmarks, conv_kernel_size=0, init_option="original",
                 scales="lra", n_iter=6):
        super().__init__()
        self.head_dim, self.num_head, self.num_landmarks = head_dim, num_head, num_landmarks
        self.init_option, self.scales, self.n_iter = init_option, scales, n_iter
        self.use_conv = conv_kernel_size > 0
        if self.use_conv:
            self.conv = nn.Conv2d(num_head, num_head, kernel_size=(conv_kernel_size, 1),
                                  padding=(conv_kernel_size // 2, 0), bias=False, groups=num_head)

    def landmarks(self, x):
        b, h, n, d = x.shape
        m = self.num_landmarks
        segs = n // m
        if n % m == 0:
            return x.reshape(b, h, m, segs, d).mean(dim=-2)
        num_k = (segs + 1) * m - n
        first = x[:, :, :num_k * segs, :].reshape(b, h, num_k, segs, d).mean(dim=-2)
        last = x[:, :, num_k * segs:, :].reshape(b, h, m - num_k, segs + 1, d).mean(dim=-2)
        return torch.cat((first, last), dim=-2)

    def forward(self, Q, K, V):
        if self.scales == "lra":
            Q = Q / math.sqrt(math.sqrt(self.head_dim))
            K = K / math.sqrt(math.sqrt(self.head_dim))
        else:
            Q = Q / self.head_dim ** 0.5
        if self.scales == "lra" and self.num_landmarks == Q.shape[2]:  # LRA's num_landmarks == seq_len: exact
            X = torch.matmul(torch.nn.functional.softmax(torch.matmul(Q, K.transpose(-1, -2)), dim=-1), V)
            if self.use_conv:
                X = X + self.conv(V)
            return X
        Q_landmarks, K_landmarks = self.landmarks(Q), self.landmarks(K)
        kernel_1 = torch.nn.functional.softmax(torch.matmul(Q, K_landmarks.transpose(-1, -2)), dim=-1)
        kernel_2 = torch.nn.functional.softmax(torch.matmul(Q_landmarks, K_landmarks.transpose(-1, -2)), dim=-1)
        kernel_3 = torch.nn.functional.softmax(torch.matmul(Q_landmarks, K.transpose(-1, -2)), dim=-1)
        X = torch.matmul(torch.matmul(kernel_1, self.iterative_inv(kernel_2)), torch.matmul(kernel_3, V))
        if self.use_conv:
            X = X + self.conv(V)
        return X

    def iterative_inv(self, mat):
        I = torch.eye(mat.size(-1), device=mat.device, dtype=mat.dtype)
        K = mat
        if self.init_option == "original":
            V = 1 / torch.max(torch.sum(K, dim=-2)) * K.transpose(-1, -2)
        else:
            V = 1 / torch.max(torch.sum(K, dim=-2), dim=-1).values[:, :, None, None] * K.transpose(-1, -2)
        for _ in range(self.n_iter):
            KV = torch.matmul(K, V)
            V = torch.matmul(0.25 * V, 13 * I - torch.matmul(KV, 15 * I - torch.matmul(KV, 7 * I - KV)))
        return V


class NystromBlockAttention(nn.Module):
    """The official `Attention` wrapper: W_q, W_k, W_v, split heads, the kernel, combine heads, ff."""

    def __init__(self, dim, num_heads, num_landmarks=4, conv_kernel_size=0, init_option="original", scales="lra"):
        super().__init__()
        self.num_head, self.head_dim = num_heads, dim // num_heads
        self.W_q = nn.Linear(dim, dim)
        self.W_k = nn.Linear(dim, dim)
        self.W_v = nn.Linear(dim, dim)
        self.attn = NystromAttention(self.head_dim, num_heads, num_landmarks, conv_kernel_size, init_option, scales)
        self.ff = nn.Linear(dim, dim)

    def split_heads(self, X):
        return X.reshape(X.size(0), X.size(1), self.num_head, self.head_dim).transpose(1, 2)

    def combine_heads(self, X):
        X = X.transpose(1, 2)
        return X.reshape(X.size(0), X.size(1), self.num_head * self.head_dim)

    def forward(self, X):
        Q, K, V = self.split_heads(self.W_q(X)), self.split_heads(self.W_k(X)), self.split_heads(self.W_v(X))
        return self.ff(self.combine_heads(self.attn(Q, K, V)))
