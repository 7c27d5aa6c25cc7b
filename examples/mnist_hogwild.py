"""Hogwild training: several processes train one model in shared memory, without locks
(as pytorch/examples' mnist_hogwild does), on synthetic data small enough to run in seconds.

    python examples/mnist_hogwild.py                      # 4 processes, 3 epochs
    python examples/mnist_hogwild.py --num-processes 2 --epochs 5
    python examples/mnist_hogwild.py --backend torch      # the same program on PyTorch

The data is an MNIST stand-in: 28x28 "images" of 10 classes, each class a fixed random
pattern plus noise. The model's parameters are moved to shared memory
(model.share_memory()); each process gets the model as a Process argument, builds its own
optimizer over the same parameters and trains on its shard of the data, every step
writing the shared weights in place while the others read and write them too. The main
process then evaluates the model they trained together.
"""
from __future__ import annotations

import argparse
import importlib
import time


def make_data(torch, n, seed):
    g = torch.Generator().manual_seed(seed)
    patterns = torch.randn(10, 1, 28, 28, generator=torch.Generator().manual_seed(1234))
    labels = torch.randint(0, 10, (n,), generator=g)
    images = patterns[labels] + 1.5 * torch.randn(n, 1, 28, 28, generator=g)
    return images, labels


def build_model(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 8, kernel_size=5, stride=2)  # 8 x 12 x 12
            self.fc1 = nn.Linear(8 * 12 * 12, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.conv(x)).flatten(1)
            x = torch.relu(self.fc1(x))
            return torch.log_softmax(self.fc2(x), dim=1)

    return Net()


def train(rank, args, model, images, labels):
    torch = importlib.import_module(args.backend)
    torch.set_num_threads(1)  # the processes are the parallelism
    torch.manual_seed(args.seed + rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    shard = torch.arange(rank, len(labels), args.num_processes)
    for _ in range(args.epochs):
        order = shard[torch.randperm(len(shard))]
        for start in range(0, len(order), args.batch_size):
            batch = order[start:start + args.batch_size]
            optimizer.zero_grad()
            loss = torch.nn.functional.nll_loss(model(images[batch]), labels[batch])
            loss.backward()
            optimizer.step()  # writes the shared parameters in place, no lock


def evaluate(torch, model, images, labels):
    with torch.no_grad():
        out = model(images)
        loss = torch.nn.functional.nll_loss(out, labels).item()
        accuracy = (out.argmax(1) == labels).float().mean().item()
    return loss, accuracy


def run(args):
    torch = importlib.import_module(args.backend)
    mp = importlib.import_module(f"{args.backend}.multiprocessing")
    torch.manual_seed(args.seed)
    model = build_model(torch)
    model.share_memory()  # the processes below train these very parameters
    images, labels = make_data(torch, args.train_size, args.seed)
    test_images, test_labels = make_data(torch, 1000, args.seed + 1)
    before = evaluate(torch, model, test_images, test_labels)
    start = time.perf_counter()
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, images, labels))
        p.start()
        processes.append(p)
    for p in processes:
        p.join(args.timeout)
        if p.exitcode != 0:
            for q in processes:
                q.kill()
            raise RuntimeError(f"a training process failed (exit code {p.exitcode})")
    seconds = time.perf_counter() - start
    after = evaluate(torch, model, test_images, test_labels)
    return {"before": before, "after": after, "seconds": seconds}


def parse(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["ember", "torch"], default="ember")
    parser.add_argument("--num-processes", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--train-size", type=int, default=4096)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each process")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    result = run(args)
    (l0, a0), (l1, a1) = result["before"], result["after"]
    print(f"{args.backend}: {args.num_processes} processes, {args.epochs} epochs in {result['seconds']:.2f} s; "
          f"test loss {l0:.3f} -> {l1:.3f}, accuracy {a0:.1%} -> {a1:.1%}")


if __name__ == "__main__":
    main()
