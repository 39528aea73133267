#!/usr/bin/env python3
"""Writes the seed inputs of the struct-API fuzz targets.

The fuzz targets decode bytes into request structs (see the comments at the
top of test/fuzz/fuzz_util.h, fuzz_determine_timestamp.c and
fuzz_select_as_ofs.c).  The seeds are the reference scenarios in that form,
so that fuzzing starts from requests that reach every branch of timestamp
and as-of selection.  Run from the repository root:

    python3 test/fuzz/make_seeds.py
"""
import os
import struct

TS_MAX = 2**63 - 1
HERE = os.path.dirname(os.path.abspath(__file__))


def ts(v):
    if 0 <= v < 0xF8:
        return [v]
    if v == TS_MAX:
        return [0xF8]
    if v == -1:
        return [0xFA]
    return [0xFC] + list(struct.pack(">q", v))


def frontier(v):
    """None is the empty frontier."""
    return [1] if v is None else [0] + ts(v)


ISO = {"serializable": 0, "strict serializable": 1,
       "strong session serializable": 2}
WHEN = {"immediately": 0, "freshest_table_write": 1, "as_of": 2,
        "as_of_at_least": 3}


def ts_request(iso, when, inputs, when_ts=0, oracle=None, timeline=True,
               session=None, rtr=None):
    flags = ((not timeline) << 0 | (oracle is not None) << 1
             | (session is not None) << 2 | (rtr is not None) << 3)
    out = [ISO[iso], WHEN[when]] + ts(when_ts) + [flags]
    for v in (oracle, session, rtr):
        out += ts(v or 0)
    out.append(len(inputs))
    for since, upper in inputs:
        out += frontier(since) + frontier(upper)
    return bytes(out)


def asof_request(now, storage, dataflows, read_only=False):
    """storage: [(name, since, upper)]; dataflows: [(name, inputs, policy)]
    with policy None, ("lag", lag, granularity), ("valid_from", t) or
    ("step_back",).  A dataflow named like a storage collection writes it."""
    snames = [s[0] for s in storage]
    dnames = [d[0] for d in dataflows]
    out = [len(storage), len(dataflows)] + ts(now) + [int(read_only)]
    for _, since, upper in storage:
        out += frontier(since) + frontier(upper)
    for name, inputs, policy in dataflows:
        out.append(len(inputs))
        for i in inputs:
            if i in snames:
                out.append(snames.index(i) << 1)
            else:
                out.append(dnames.index(i) << 1 | 1)
        out.append(snames.index(name) + 1 if name in snames else 0)
        if policy is None:
            out.append(0)
        elif policy[0] == "lag":
            out += [1] + ts(policy[1]) + ts(policy[2])
        elif policy[0] == "valid_from":
            out += [2] + frontier(policy[1])
        else:
            out.append(3)
        out.append(0)                   # no fixed as-of
    return bytes(out)


U = [(10, 20)]
TS_SEEDS = {
    "t1": ts_request("serializable", "immediately", U),
    "t2": ts_request("strict serializable", "immediately", U, oracle=25),
    "t4": ts_request("strict serializable", "immediately", U, timeline=False),
    "t5": ts_request("serializable", "as_of", U, when_ts=5),
    "t8": ts_request("strict serializable", "as_of_at_least", U, when_ts=5),
    "t10": ts_request("serializable", "freshest_table_write", U, oracle=25),
    "t11": ts_request("strong session serializable", "immediately", U,
                      oracle=25, session=12),
    "t14": ts_request("serializable", "immediately", [(10, None)]),
    "rtr": ts_request("strict serializable", "immediately",
                      [(10, None), (None, 20)], oracle=15, rtr=30),
    "three": ts_request("serializable", "as_of",
                        [(10, 40), (17, 30), (17, None)], when_ts=17),
    "max": ts_request("strict serializable", "immediately",
                      [(0, TS_MAX)], oracle=TS_MAX),
}

ASOF_SEEDS = {
    "s2": asof_request(100, [("s1", 10, 20), ("u3", 10, 15), ("u4", 10, 13)],
                       [("u1", ["s1"], None), ("u2", ["s1"], None),
                        ("u3", ["u2"], None), ("u4", ["u2"], None)]),
    "s4": asof_request(100, [("s1", 10, 20), ("u6", 10, 18)],
                       [("u1", ["s1"], ("lag", 5, 1)),
                        ("u2", ["s1"], ("lag", 15, 1)),
                        ("u3", ["s1"], ("valid_from", 13)),
                        ("u4", ["s1"], ("valid_from", 5)),
                        ("u5", [], ("lag", 5, 1)),
                        ("u6", ["s1"], ("valid_from", 13))]),
    "s7": asof_request(15, [("s1", 10, 20), ("s2", None, None),
                            ("u4", 10, 20)],
                       [("u1", ["s1"], None), ("u2", ["s2"], None),
                        ("u3", ["s1", "s2"], None), ("u4", ["u2"], None)],
                       read_only=True),
    "s8": asof_request(100, [("s1", 10, 20), ("u3", 14, 15)],
                       [("u1", ["s1"], ("lag", 1, 1)),
                        ("u2", ["u1"], ("lag", 1, 1)),
                        ("u3", ["u1"], ("step_back",))]),
    "cycle": asof_request(1, [], [("a", ["b"], None), ("b", ["a"], None)]),
}

for target, seeds in (("fuzz_determine_timestamp", TS_SEEDS),
                      ("fuzz_select_as_ofs", ASOF_SEEDS)):
    d = os.path.join(HERE, target + ".seeds")
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    for name, data in seeds.items():
        with open(os.path.join(d, name + ".bin"), "wb") as f:
            f.write(data)
