#!/usr/bin/env python3
"""Reference implementation of modelstub's chaos PRNG (standard library only).

Written from the spec (docs of issue 15, "Chaos PRNG"), not from the TypeScript, so that a test
running both catches a slip in either. A harness can use it to know in advance which calls of an
episode a chaos plan will fault.

    python3 chaos_schedule.py SEED SESSION SEQUENCE STEP ERROR_COUNT   -> prints "roll pick"
    python3 chaos_schedule.py --vectors                                 -> the fixed vectors, JSON lines

Python ints are unbounded, so every add and multiply is reduced mod 2^64 to act as a uint64.
"""
import json
import sys

U64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
ROLLS = 1_000_000  # rates are whole parts per million


def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


class SplitMix64:
    def __init__(self, state):
        self.state = state & U64

    def next(self):
        self.state = (self.state + GOLDEN) & U64
        return mix(self.state)


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & U64
    return h


def absorb(k, v):
    return mix(((k ^ v) + GOLDEN) & U64)


def key(seed, session, sequence, step):
    k = absorb(seed & U64, fnv1a64(session.encode("utf-8")))
    k = absorb(k, sequence & U64)
    return absorb(k, fnv1a64(step.encode("utf-8")))


def draws(seed, session, sequence, step, error_count):
    """(key, roll, pick) of one call: roll decides the kind, pick which error."""
    k = key(seed, session, sequence, step)
    rng = SplitMix64(k)
    d1 = rng.next()
    d2 = rng.next()
    return k, d1 % ROLLS, d2 % error_count


KINDS = ("error", "timeout", "hang", "break", "latency")


def kind(roll, rates):
    """The fault kind for a roll, given rates (0..1) by kind name; None is no fault."""
    acc = 0
    for name in KINDS:
        acc += round(rates.get(name, 0) * 1e6)
        if roll < acc:
            return name
    return None


# (seed, session, sequence, step, error_count): seed 0, 2^64-1, above 2^53, empty step and
# session, non-ASCII session, sequence 1 and large sequences. test/shared/chaos-draw.test.ts pins them.
VECTORS = [
    (0, "s", 1, "", 1),
    (42, "session-1", 1, "plan", 1),
    (42, "session-1", 2, "plan", 3),
    (42, "session-1", 3, "act", 2),
    (42, "session-2", 1, "plan", 1),
    ((1 << 64) - 1, "session-1", 1, "plan", 5),
    ((1 << 53) + 1, "abc", 7, "act", 4),
    (1 << 63, "s", 2, "", 6),
    (1234567890123456789, "ünïcödé-セッション", 1, "plan", 3),
    (7, "", 1, "", 1),
    (42, "session-1", 4294967295, "plan", 7),
    (42, "session-1", (1 << 53) - 1, "act", 2),
    (0xDEADBEEFCAFEBABE, "run/17", 100, "tool_call", 10),
    (1, "a", 1, "a", 1000),
]


def print_vectors():
    for seed, session, sequence, step, error_count in VECTORS:
        k, roll, pick = draws(seed, session, sequence, step, error_count)
        print(json.dumps({
            "seed": str(seed),  # a string: JSON numbers lose precision above 2^53
            "session": session,
            "sequence": sequence,
            "step": step,
            "errorCount": error_count,
            "key": "0x%016x" % k,
            "roll": roll,
            "pick": pick,
        }, ensure_ascii=False))


def main(argv):
    if argv == ["--vectors"]:
        print_vectors()
        return 0
    if len(argv) != 5:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    seed = int(argv[0], 0) if argv[0].lower().startswith("0x") else int(argv[0])
    sequence, error_count = int(argv[2]), int(argv[4])
    if not 0 <= seed <= U64 or sequence < 1 or error_count < 1:
        print("SEED must be 0..2^64-1, SEQUENCE and ERROR_COUNT >= 1", file=sys.stderr)
        return 2
    _, roll, pick = draws(seed, argv[1], sequence, argv[3], error_count)
    print(roll, pick)
    return 0


if __name__ == "__main__":
    sys.stdout.reconfigure(encoding="utf-8")
    sys.exit(main(sys.argv[1:]))
