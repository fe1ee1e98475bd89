"""Each run's stored epoch times beside the script's own clock: its `WALL epoch=N begin=T end=T`
lines (tests/data/orchestrator/launchers/replay_forms.py), over ranks by the epoch rule (the first
rank's begin to the next epoch's first begin; the last epoch to the last rank's end).
usage: clock_table.py DB"""
import sqlite3, sys, re, collections
db = sqlite3.connect(sys.argv[1])
for run_id, cond, np, form in db.execute("""SELECT r.id, r.condition, r.np, f.level FROM runs r JOIN run_factors f ON f.run_id=r.id AND f.factor='form' ORDER BY r.id"""):
    fb, le = {}, {}
    for (text,) in db.execute("SELECT text FROM lines WHERE run_id=?", (run_id,)):
        m = re.match(r"WALL epoch=(\d+) begin=([\d.]+) end=([\d.]+)", text)
        if m:
            e, b, en = int(m[1]), float(m[2]), float(m[3])
            fb[e] = min(fb.get(e, b), b); le[e] = max(le.get(e, en), en)
    own = {e: (fb[e+1] if e+1 in fb else le[e]) - fb[e] for e in fb}
    stored = dict(db.execute("SELECT epoch, duration_seconds FROM epochs WHERE run_id=?", (run_id,)))
    status = db.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()[0]
    print(f"{cond:8} np={np} {form:12} {status:4} stored " + " ".join(f"{stored[e]:.3f}" for e in sorted(stored)) + "  own " + " ".join(f"{own[e]:.3f}" for e in sorted(own)) + f"  max|diff| {max(abs(stored[e]-own[e]) for e in stored)*1000:.1f} ms")
