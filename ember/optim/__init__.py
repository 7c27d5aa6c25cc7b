"""ember.optim: optimizers with torch's update rules and state_dict format, and the
learning-rate schedulers (ember.optim.lr_scheduler)."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from . import lr_scheduler  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
