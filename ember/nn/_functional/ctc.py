"""The connectionist temporal classification loss: the native _ctc_loss gives each
sample's loss and its alpha table, _ctc_loss_backward torch's gradient; the reductions
(torch's mean divides each loss by its target length first) are composed here."""
from __future__ import annotations

from ... import _C
from .loss import _reduction_enum
from ... import _autocast


def _lengths(lengths, device):
    """Lengths as given (a tensor) or as a tuple or list of ints, as an int64 tensor on
    device (log_probs')."""
    if isinstance(lengths, _C.TensorBase):
        return lengths
    if not isinstance(lengths, (tuple, list)) or not all(isinstance(v, int) for v in lengths):
        raise TypeError(f"ctc_loss(): lengths must be a Tensor or a tuple of ints, not {type(lengths).__name__}")
    return _C.tensor(list(lengths), dtype=_C.int64, device=device)


@_autocast.fp32
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False):
    """The CTC loss of log_probs (T, N, C) or (T, C) (log-softmax outputs) against targets,
    (N, S) padded or the N sequences concatenated; input_lengths and target_lengths are
    tensors or sequences of ints. 'mean' averages the losses divided by their target
    lengths; zero_infinity zeroes infinite losses (impossible alignments) and their
    gradients.

    >>> round(F.ctc_loss(ember.full((2, 1, 2), 0.5).log(), ember.tensor([[1]]), [2], [1]).item(), 4)
    0.2877
    """
    red = _reduction_enum(reduction)
    input_lengths = _lengths(input_lengths, log_probs.device)
    target_lengths = _lengths(target_lengths, log_probs.device)
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0)
        input_lengths, target_lengths = input_lengths.reshape(-1), target_lengths.reshape(-1)
    loss = _C._ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        loss = _C.where(loss == float("inf"), _C.zeros_like(loss), loss)
    if red == 1:
        return (loss / target_lengths.clamp_min(1)).mean()
    if red == 2:
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss
