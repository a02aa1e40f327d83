"""Checks a pinned run on the GPU machine.

usage: check_pin.py TRACE_DIR|- PIN_DIR [PROGRAM_STDOUT]
With a trace: every cuDNN file that entered any process (load events, raw
JSONL) lies in PIN_DIR (real path), at least the dispatcher and graph came
from there, and pin events were written. With PROGRAM_STDOUT: the lines
`maps: PATH` the program printed from its own /proc/self/maps (CDT_PRINT_MAPS)
all lie in PIN_DIR.
"""
import glob, json, os, re, sys

trace_dir, pin_dir = sys.argv[1], os.path.realpath(sys.argv[2])
stdout = sys.argv[3] if len(sys.argv) > 3 else None
problems = []
cudnn = re.compile(r"^libcudnn(_\w+)?\.so(\.\d+)*$")

def inside(p):
    return os.path.realpath(p).startswith(pin_dir + "/")

if trace_dir != "-":
    loads, pins = [], []
    for f in sorted(glob.glob(os.path.join(trace_dir, "*.jsonl"))):
        for line in open(f):
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e["ev"] == "load" and e.get("new", True) and cudnn.match(os.path.basename(e["path"])):
                loads.append(e)
            elif e["ev"] == "pin":
                pins.append(e)
    actions = {}
    for p in pins:
        actions[p["action"]] = actions.get(p["action"], 0) + 1
    print(f"== trace: {len(loads)} cuDNN files entered, pin events {actions}")
    for e in loads:
        where = "in pin dir" if inside(e.get("realpath") or e["path"]) else "OUTSIDE"
        print(f"  {e['path']}  [{e['reason']}, asked as {e['name']}]  {where}")
        if where != "in pin dir":
            problems.append(f"cuDNN file outside the pin directory: {e['path']}")
    names = {os.path.basename(e["path"]).split(".so")[0] for e in loads}
    for need in ("libcudnn", "libcudnn_graph"):
        if need not in names:
            problems.append(f"{need} never entered the process")
    if not pins:
        problems.append("no pin events")
if stdout:
    maps = [l.split(" ", 1)[1].strip() for l in open(stdout) if l.startswith("maps: ")]
    print(f"== /proc/self/maps of the program: {len(maps)} cuDNN files")
    if not maps:
        problems.append("the program printed no maps lines (CDT_PRINT_MAPS)")
    for m in maps:
        if not inside(m):
            problems.append(f"mapped outside the pin directory: {m}")
for p in problems:
    print("  PROBLEM:", p)
print(f"== {'PASS' if not problems else 'FAIL'}")
sys.exit(1 if problems else 0)
