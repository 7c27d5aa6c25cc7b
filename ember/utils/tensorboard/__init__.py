"""ember.utils.tensorboard: SummaryWriter, writing TensorBoard event files with no
dependency (the protobuf messages and the TFRecord framing are encoded here)."""
from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
