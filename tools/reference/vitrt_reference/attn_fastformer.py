"""Fastformer attention (docs/linear_attention.md, Fastformer), written from the official wuch15/Fastformer code:
`FastAttention` = `FastSelfAttention` (`self`) followed by `BertSelfOutput` (`output`). State_dict keys mirror the
official module's: `self.query`, `self.query_att`, `self.key`, `self.key_att`, `self.transform`, `output.dense`,
`output.LayerNorm` (each `.weight`, `.bias`). Vision has no attention mask, so none is added.

In deit.py's VisionTransformer use `attn_factory=fastformer_attention` (or `lambda dim, heads:
FastAttention(dim, heads)`): the pre-norm block becomes `x + LN(dense(fast(norm1 x)) + norm1 x)`."""
import torch
import torch.nn as nn


class FastSelfAttention(nn.Module):
    def __init__(self, dim, num_heads):
        super().__init__()
        assert dim % num_heads == 0
        self.num_attention_heads = num_heads
        self.attention_head_size = dim // num_heads
        self.all_head_size = dim
        self.query = nn.Linear(dim, dim)
        self.query_att = nn.Linear(dim, num_heads)
        self.key = nn.Linear(dim, dim)
        self.key_att = nn.Linear(dim, num_heads)
        self.transform = nn.Linear(dim, dim)
        self.softmax = nn.Softmax(dim=-1)

    def transpose_for_scores(self, x):  # [B,N,C] -> [B,h,N,d]
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(*new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states):
        batch_size, seq_len, _ = hidden_states.shape
        mixed_query_layer = self.query(hidden_states)
        mixed_key_layer = self.key(hidden_states)
        # [B,h,N]: query_att reads all C channels of each token
        query_for_score = self.query_att(mixed_query_layer).transpose(1, 2) / self.attention_head_size ** 0.5
        query_weight = self.softmax(query_for_score).unsqueeze(2)  # [B,h,1,N]
        query_layer = self.transpose_for_scores(mixed_query_layer)  # [B,h,N,d]
        pooled_query = torch.matmul(query_weight, query_layer).transpose(1, 2).view(
            -1, 1, self.num_attention_heads * self.attention_head_size)  # [B,1,C]
        pooled_query_repeat = pooled_query.repeat(1, seq_len, 1)
        mixed_query_key_layer = mixed_key_layer * pooled_query_repeat
        query_key_score = (self.key_att(mixed_query_key_layer) / self.attention_head_size ** 0.5).transpose(1, 2)
        query_key_weight = self.softmax(query_key_score).unsqueeze(2)
        key_layer = self.transpose_for_scores(mixed_query_key_layer)
        pooled_key = torch.matmul(query_key_weight, key_layer)  # [B,h,1,d]
        # query = value
        weighted_value = (pooled_key * query_layer).transpose(1, 2)
        weighted_value = weighted_value.reshape(
            weighted_value.size()[:-2] + (self.num_attention_heads * self.attention_head_size,))
        weighted_value = self.transform(weighted_value) + mixed_query_layer
        return weighted_value


class BertSelfOutput(nn.Module):
    def __init__(self, dim, eps=1e-12):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.LayerNorm = nn.LayerNorm(dim, eps=eps)

    def forward(self, hidden_states, input_tensor):
        return self.LayerNorm(self.dense(hidden_states) + input_tensor)


class FastAttention(nn.Module):
    def __init__(self, dim, num_heads, eps=1e-12):
        super().__init__()
        self.self = FastSelfAttention(dim, num_heads)
        self.output = BertSelfOutput(dim, eps)

    def forward(self, x):
        return self.output(self.self(x), x)


def fastformer_attention(dim, num_heads):
    """deit.py attn_factory: the official FastAttention (BertSelfOutput's LayerNorm eps 1e-12)."""
    return FastAttention(dim, num_heads)
