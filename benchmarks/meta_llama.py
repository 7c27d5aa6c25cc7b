"""The time and memory to build a 7B-parameter LLaMA-shaped model on the meta device and
count its parameters (issue 17's figure), for ember and for torch, each in a fresh process.

    python benchmarks/meta_llama.py
"""
import json
import subprocess
import sys

CHILD = r"""
import resource, sys, time
t0 = time.perf_counter()
lib = __import__(sys.argv[1])
nn = lib.nn
t1 = time.perf_counter()


class Block(nn.Module):
    def __init__(self, d, ffn, heads):
        super().__init__()
        self.attention_norm = nn.RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.ffn_norm = nn.RMSNorm(d)
        self.w1 = nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)
        self.w3 = nn.Linear(d, ffn, bias=False)


class Llama(nn.Module):
    def __init__(self, vocab=32000, d=4096, layers=32, heads=32, ffn=11008):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(Block(d, ffn, heads) for _ in range(layers))
        self.norm = nn.RMSNorm(d)
        self.output = nn.Linear(d, vocab, bias=False)


with lib.device("meta"):
    model = Llama()
count = sum(p.numel() for p in model.parameters())
t2 = time.perf_counter()
print(json.dumps({"params": count, "import_s": t1 - t0, "build_s": t2 - t1,
                  "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "device": str(next(model.parameters()).device)}))
""".replace("json.dumps", "__import__('json').dumps")


def main():
    results = {}
    for lib in ("ember", "torch"):
        out = subprocess.run([sys.executable, "-c", CHILD, lib], capture_output=True, text=True, check=True)
        results[lib] = json.loads(out.stdout.strip().splitlines()[-1])
    for lib, r in results.items():
        print(f"{lib:6s} {r['params'] / 1e9:.3f} B parameters on {r['device']}: import {r['import_s'] * 1e3:.0f} ms, "
              f"build and count {r['build_s'] * 1e3:.0f} ms, peak RSS {r['max_rss_mib']:.0f} MiB")
    assert results["ember"]["params"] == results["torch"]["params"]


if __name__ == "__main__":
    main()
