"""Summarise a py-spy profile (``--format raw --threads``): where the CPU went.

    python benchmarks/stacks.py PROFILE.txt [--cpu PERCENT] [--top 25]
        [--focus FUNCTION] [--paths 10] [--depth 6]

Prints, as shares of the samples in which a thread was running (and, given ``--cpu``,
the console's CPU measured over the same span from /proc, as that share of it in % of
one core; the samples themselves over-count on a busy machine, where a thread that is
ready to run but waiting for a core is sampled as running):

- by thread (the UI thread, the thread-pool workers of the rescan and the monitor,
  watchdog's threads);
- by function, ``self`` (the sampled frame itself) and ``total`` (the function anywhere
  in the stack, counted once per sample; frames of runeconsole, Textual, Rich and
  watchdog, less the event loop's and the entry point's plumbing);
- ``--focus FUNCTION``: the call paths that reach it, heaviest first (runeconsole and
  Textual frames only, the ``--depth`` frames nearest to it).

py-spy samples a waiting thread now and then even with ``--nonblocking``; samples whose
innermost frame is a known wait (``Condition.wait``, a selector's ``select``, a thread
pool's idle worker...) are left out and counted apart.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

WAITS = {
    "Condition.wait",
    "Event.wait",
    "EpollSelector.select",
    "SelectSelector.select",
    "PollSelector.select",
    "InotifyFD._check_inotify_fd",  # select() on the inotify descriptor
    "_worker",  # concurrent.futures: an idle pool thread in queue.get
    "Thread.join",
    "join",
    "sleep",
    "Queue.get",
    "_wait_for_tstate_lock",
}
FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
THREAD = re.compile(r"^thread \(\d+\): (?P<name>.*)$|^process \d+:")


def function(frame: str) -> str:
    """``Registry.read_path (runeconsole/services/registry.py:175)`` -> its name and file."""
    match = FRAME.match(frame)
    if not match:
        return frame
    return f"{match['name']} ({match['file']})"


def thread_kind(frame: str) -> str:
    match = THREAD.match(frame)
    name = (match["name"] if match and match["name"] else frame) or "?"
    if name.startswith("asyncio_"):
        return "thread pool (asyncio_N: @work(thread=True) workers)"
    if name.startswith("Thread-"):
        return "Thread-N (watchdog observer and emitters)"
    return name


# Frames on every path through the event loop, a worker or the entry point: not news.
PLUMBING = (
    "runeconsole/__main__.py",
    "runeconsole/cli/",
    "textual/app.py",
    "textual/message_pump.py",
    "textual/_callback.py",
    "textual/worker.py",
    "textual/timer.py",
    "textual/_context.py",
)


def ours(frame: str) -> bool:
    """A frame of the console or of the libraries it drives (Textual, Rich, watchdog)."""
    return any(part in frame for part in ("runeconsole/", "textual/", "rich/", "watchdog/"))


def telling(frame: str) -> bool:
    return ours(frame) and not any(part in frame for part in PLUMBING)


def load_samples(path: Path) -> list[tuple[list[str], int]]:
    samples = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            samples.append((stack.split(";"), int(count)))
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--cpu", type=float, default=None, help="measured CPU, %% of a core")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--focus", default=None, help="show call paths into this function")
    parser.add_argument("--paths", type=int, default=10)
    parser.add_argument("--depth", type=int, default=6)
    args = parser.parse_args()

    samples = load_samples(args.profile)
    running = [
        (frames, n) for frames, n in samples if function(frames[-1]).split(" (")[0] not in WAITS
    ]
    waiting = sum(n for _, n in samples) - sum(n for _, n in running)
    total = sum(n for _, n in running) or 1

    def share(count: int) -> str:
        text = f"{100 * count / total:5.1f} %"
        if args.cpu is not None:
            text += f"  ({args.cpu * count / total:5.1f} % of a core)"
        return text

    print(f"{args.profile}: {total} running samples ({waiting} waiting samples left out)")
    threads: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for frames, n in running:
        threads[thread_kind(frames[0])] += n
        own[function(frames[-1])] += n
        for name in {function(frame) for frame in frames[1:] if telling(frame)}:
            inclusive[name] += n
    print("\nby thread:")
    for name, count in threads.most_common():
        print(f"  {share(count)}  {name}")
    print("\nby function, self:")
    for name, count in own.most_common(args.top):
        print(f"  {share(count)}  {name}")
    print("\nby function, total (anywhere in the stack; the console's and its libraries'):")
    for name, count in inclusive.most_common(args.top):
        print(f"  {share(count)}  {name}")
    if args.focus:
        paths: Counter[str] = Counter()
        for frames, n in running:
            names = [function(frame) for frame in frames]
            hits = [i for i, name in enumerate(names) if name.startswith(args.focus)]
            if not hits:
                continue
            chain = [name for name in names[: hits[0] + 1] if ours(name)][-args.depth :]
            paths[" <- ".join(reversed(chain))] += n
        print(f"\ncall paths into {args.focus} (nearest frame first):")
        for chain, count in paths.most_common(args.paths):
            print(f"  {share(count)}  {chain}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
