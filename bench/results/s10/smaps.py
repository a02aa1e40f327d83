import subprocess, sys, os, re, time
env = dict(os.environ)
for kv in sys.argv[1:]:
    k, v = kv.split('=', 1); env[k] = v
p = subprocess.Popen(['target/bench/bin/memprobe'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
line = p.stdout.readline().decode()
pid = int(line.split()[1])
cur = None; agg = {}
for l in open(f'/proc/{pid}/smaps'):
    m = re.match(r'^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \S+\s*(.*)$', l)
    if m:
        cur = (os.path.basename(m[2]) or '[anon]', m[1]); continue
    m = re.match(r'^(Rss|Private_Clean|Private_Dirty):\s+(\d+)', l)
    if m and cur:
        agg.setdefault(cur, {}).setdefault(m[1], 0); agg[cur][m[1]] += int(m[2])
p.stdin.close(); p.wait()
tot = {}
for k, v in sorted(agg.items()):
    print(f"{k[0]:40s} {k[1]} rss={v.get('Rss',0):5d} priv={v.get('Private_Clean',0)+v.get('Private_Dirty',0):5d}")
    for kk in v: tot[kk] = tot.get(kk, 0) + v[kk]
print('TOTAL', tot)
