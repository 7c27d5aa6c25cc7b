"""The layers, one file per family, as in torch.nn.modules."""
from .module import Module
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, Linear
from .activation import (CELU, ELU, GELU, SELU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid,
                         Mish, ReLU, ReLU6, Sigmoid, SiLU, Softplus, Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .sparse import Embedding, EmbeddingBag
# the layers of issue 5: convolution, pooling, normalization, softmax, losses, resampling
from .activation import LogSoftmax, PReLU, Softmax, Softmax2d, Softmin
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d,
                      MaxPool1d, MaxPool2d)
from .pooling import (AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, FractionalMaxPool2d, FractionalMaxPool3d,
                      LPPool1d, LPPool2d, LPPool3d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .normalization import GroupNorm, LayerNorm, RMSNorm
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, NLLLoss, SmoothL1Loss)
# issue 16: the rest of the losses, distances, instance and local response normalization
from .activation import GLU, RReLU
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .dropout import AlphaDropout, FeatureAlphaDropout
from .distance import CosineSimilarity, PairwiseDistance
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
                           LazyInstanceNorm3d)
from .loss import (GaussianNLLLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   NLLLoss2d, PoissonNLLLoss, SoftMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss)
from .normalization import CrossMapLRN2d, LocalResponseNorm
from .loss import CTCLoss
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .fold import Fold, Unfold
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .channelshuffle import ChannelShuffle
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d,
                      ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
# the sequence layers of issue 5
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
# issue 16: the 3-d convolutions, the lazy layers
from .conv import (Conv3d, ConvTranspose3d, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                   LazyConvTranspose2d, LazyConvTranspose3d)
from .linear import LazyLinear
from .batchnorm import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
# issue 16: the last missing names
from .batchnorm import SyncBatchNorm
from .loss import LinearCrossEntropyLoss
from .linear_cross_entropy_options import LinearCrossEntropyOptions

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity", "Linear",
           "Bilinear", "ReLU", "ReLU6", "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Tanh",
           "Sigmoid", "Hardtanh", "Hardswish", "Hardsigmoid", "Threshold", "LogSigmoid", "Softsign", "Tanhshrink",
           "Hardshrink", "Softshrink", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Flatten", "Unflatten",
           "Embedding", "EmbeddingBag"]
__all__ += [
    "Softmax", "LogSoftmax", "Softmin", "Softmax2d", "PReLU", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "L1Loss",
    "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss", "HuberLoss",
    "CosineEmbeddingLoss", "MarginRankingLoss", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold",
    "Unfold", "PixelShuffle", "PixelUnshuffle", "CTCLoss",
]
__all__ += ["ChannelShuffle", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
            "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
            "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"]
__all__ += ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer", "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase",
           "RNNCell", "LSTMCell", "GRUCell"]
__all__ += ["AdaptiveLogSoftmaxWithLoss", "GLU", "RReLU", "AlphaDropout", "FeatureAlphaDropout", "CosineSimilarity",
            "PairwiseDistance", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
            "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LocalResponseNorm",
            "CrossMapLRN2d", "GaussianNLLLoss", "PoissonNLLLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
            "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "TripletMarginLoss",
            "TripletMarginWithDistanceLoss", "NLLLoss2d"]
__all__ += ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
            "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
__all__ += ["Conv3d", "ConvTranspose3d", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
            "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d"]
__all__ += ["Container", "SyncBatchNorm", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
