"""Shows why forked children can hang under the sanitizer runtime (see .ci/run): two
threads start and end threads (which allocate and free) while the main thread forks
children that allocate; prints how many children were still blocked after 5 s.

    LD_PRELOAD=$(gcc -print-file-name=libasan.so) PYTHONMALLOC=malloc ASAN_OPTIONS=detect_leaks=0 \\
        python tests/sanitizer/fork_stress.py      # GCC 12's runtime: a few of 300 hang
    python tests/sanitizer/fork_stress.py          # without it: none

A hung child waits in the ASan allocator's mutex (SizeClassAllocator64::GetFromAllocator)
that a parent thread held at the fork: GCC 12's libasan has no fork interceptor that takes
its locks around fork, as glibc's malloc does for its own arenas."""
import os
import threading
import time

stop = False


def churn():
    while not stop:
        t = threading.Thread(target=lambda: None)
        t.start()
        t.join()


def main(forks=300):
    for _ in range(2):
        threading.Thread(target=churn, daemon=True).start()
    hung = 0
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            data = [bytearray(n) for n in range(1, 2000)]
            t = threading.Thread(target=lambda: None)
            t.start()
            t.join()
            del data
            os._exit(0)
        deadline = time.monotonic() + 5
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                hung += 1
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                break
            time.sleep(0.001)
    print(f"{forks} forks, {hung} children hung")


if __name__ == "__main__":
    main()
