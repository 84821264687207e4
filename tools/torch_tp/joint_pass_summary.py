"""What torch's own pass decided on a joint graph joint_pass.py recorded, per collective class.

Usage: joint_pass_summary.py DIR TAG   (TAG e.g. A0_dp4_tp2_8layer_8b_sacnone; DIR the --out of joint_pass.py)

For each (process group, collective, phase): how many, torch's estimate and the time torch's
scheduler left exposed (OverlapScheduler's CollectiveInfo.exposed_time_ms, before bucketing), and the
summary line torch logs ("Overlap scheduling results"). Buckets: members merged per class.
"""
import collections
import json
import os
import sys

out, tag = sys.argv[1], sys.argv[2]
res = json.load(open(os.path.join(out, "results", tag + "_joint.json")))
dump = json.load(open(os.path.join(out, "fx", tag + "_joint.json")))
rows = {n["name"]: n for n in dump["nodes"]}
phase = res["phase_of"]


def cls(name):
    r = rows[name]
    return r["mesh_dim"], r["target"].split(".")[1], phase.get(name, "?")


agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
for start, info in res["collective_info"].items():
    a = agg[cls(start)]
    a[0] += 1
    a[1] += info["estimated_ms"]
    a[2] += info["exposed_ms"]
merged = collections.Counter()
for b in res["buckets"]:
    merged[cls(b[0])] += len(b) - 1
s = res["summary"]
print(f"{tag}: collectives {res['collectivesBefore']} -> {res['collectivesAfter']}; "
      f"exposed {s['total_exposed_ms']} of {s['total_potential_exposed_ms']} ms (torch's accounting); "
      f"peak {s['original_peak_memory']} -> {s['rescheduled_peak_memory']} B "
      f"(allowed {res['allowed_peak_memory_bytes']}); pass {res['pass_wall_s']} s")
for k in sorted(agg, key=str):
    n, est, exp = agg[k]
    hidden = 100 * (1 - exp / est) if est else 0.0
    print(f"  {'/'.join(k):42s} {n:4d}  est {est:8.2f} ms  exposed {exp:8.2f} ms  hidden {hidden:5.1f} %"
          f"  merged into buckets {merged.get(k, 0)}")
