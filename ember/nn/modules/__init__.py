"""The layers, one file per family, as in torch.nn.modules."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, Linear
from .activation import (CELU, ELU, GELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
                         Mish, ReLU, ReLU6, Sigmoid, SiLU, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .sparse import Embedding
from .normalization import LayerNorm
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Tanh",
           "Sigmoid", "Hardtanh", "Hardswish", "Hardsigmoid", "Threshold", "LogSigmoid", "Softsign", "Tanhshrink",
           "Hardshrink", "Softshrink", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Flatten", "Unflatten",
           "Embedding", "LayerNorm", "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase",
           "RNNCell", "LSTMCell", "GRUCell"]
