"""ember.nn.parallel: DistributedDataParallel (and CPU DataParallel), as torch.nn.parallel."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
