"""Runs first and in seconds: the package imports, builds a tensor, views and indexes it."""
import ember


def test_import_and_basic_tensor():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(x, ember.Tensor)
    assert x.shape == (2, 2) and x.dtype is ember.float32
    assert x.t().tolist() == [[1.0, 3.0], [2.0, 4.0]]
    assert x[1, 0].item() == 3.0
    x[0] = 7
    assert x.tolist() == [[7.0, 7.0], [3.0, 4.0]]
    assert repr(ember.arange(3)) == "tensor([0, 1, 2])"


def test_views_share_storage():
    x = ember.zeros(6)
    v = x.view(2, 3)
    v[1, 2] = 5
    assert x[5].item() == 5.0
    assert v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
