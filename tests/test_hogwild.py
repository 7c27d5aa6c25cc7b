"""examples/mnist_hogwild.py: processes training one shared model without locks converge,
and the main process sees what they trained."""
import importlib.util
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parent.parent / "examples" / "mnist_hogwild.py"
spec = importlib.util.spec_from_file_location("mnist_hogwild_example", PATH)
hogwild = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hogwild)


@pytest.mark.timeout(120)
def test_hogwild_converges():
    args = hogwild.parse(["--num-processes", "3", "--epochs", "2", "--train-size", "2048", "--timeout", "60"])
    result = hogwild.run(args)
    (loss0, acc0), (loss1, acc1) = result["before"], result["after"]
    assert acc0 < 0.3 and loss0 > 2.0  # chance level before training
    assert acc1 > 0.95 and loss1 < 0.2  # the parent's model was trained by the children


@pytest.mark.timeout(120)
def test_hogwild_with_one_process_matches_in_process_training():
    """One training process writes the shared model exactly as training in place would."""
    import ember

    args = hogwild.parse(["--num-processes", "1", "--epochs", "1", "--train-size", "256", "--timeout", "60"])
    threads = ember.get_num_threads()
    ember.manual_seed(args.seed)
    reference = hogwild.build_model(ember)
    images, labels = hogwild.make_data(ember, args.train_size, args.seed)
    try:
        hogwild.train(0, args, reference, images, labels)  # sets one thread, as in a worker
    finally:
        ember.set_num_threads(threads)
    result = hogwild.run(args)
    test_images, test_labels = hogwild.make_data(ember, 1000, args.seed + 1)
    assert result["after"] == pytest.approx(hogwild.evaluate(ember, reference, test_images, test_labels), abs=1e-5)
