import sys

from . import generate

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tools.codegen OUT_DIR")
    for path in generate(sys.argv[1]):
        print(path)
