#!/bin/bash
# A campaign over 3 MPI ranks on this machine (--oversubscribe): the merged coverage is exactly the
# union of what the ranks covered themselves, every rank's bugs reach rank 0's bugs/ and no
# signature is stored twice, models move between the ranks; a rank killed with SIGKILL takes the
# job down and --resume continues it from the stores; clear errors. Exits 77 (skipped) when
# memo-fuzz was built without MPI, which CTest counts as a skip only then.
. "$(dirname "$0")/lib/preamble.sh"

"$memo" run --help | grep -- "--mpi" >/dev/null || fail "run --help does not describe --mpi"
if "$memo" run --mpi --out "$tmp/none" --seconds 1 2>&1 | grep -q "built without MPI"; then
  echo "memo-fuzz was built without MPI: skipped"
  exit 77
fi
command -v mpirun >/dev/null || fail "mpirun is not installed (openmpi-bin)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_warn_on_fork=0
mpi=(mpirun --oversubscribe -np 3)
# Small models and a short exchange period: many exchanges in a short campaign.
common=(run --mpi --backends reference --lanes 1 --max-cost 200000 --sync-seconds 1 --quiet)

timeout 300 "${mpi[@]}" "$memo" "${common[@]}" --seconds 12 --seed 5 --out "$tmp/c" >"$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; fail "3-rank campaign failed"; }
grep -q "3 ranks" "$tmp/c.log" || { cat "$tmp/c.log"; fail "rank 0's summary does not name the ranks"; }
for r in 1 2; do [[ -f "$tmp/c/ranks/$r/store.db" ]] || fail "rank $r has no store of its own"; done

check() {  # $1: a campaign directory; $2: "killed" when a rank of it died (see below)
  python3 - "$1" "${2:-}" <<'PY' || fail "$1: stats.json"
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
killed = sys.argv[2] == "killed"
s = json.load(open(d / "stats.json"))
assert s["ranks"] == 3, f"ranks {s['ranks']}"
per = s["per_rank"]
assert [p["rank"] for p in per] == [0, 1, 2], [p["rank"] for p in per]
for k in ("layer_type", "layer_pair", "layer_param", "layer_input"):
    bits = [int(p["coverage_items"][k], 16) for p in per]
    union = 0
    for b in bits: union |= b
    merged = s["coverage"][k]["covered"]
    # A rank killed resumes from its own last checkpoint, without what it covered and shared since:
    # rank 0's merge keeps those (their models did run), so after a kill it may hold more.
    if killed:
        assert bin(union).count("1") <= merged, f"{k}: merged {merged} < union of the ranks' {bin(union).count('1')}"
    else:
        assert bin(union).count("1") == merged, f"{k}: merged {merged} != union of the ranks' {bin(union).count('1')}"
    for p, b in zip(per, bits):
        assert bin(b).count("1") == p["coverage"][k]["covered"], f"{k}: rank {p['rank']}'s items and count differ"
# The job's counters are the ranks' summed.
for k in ("models_generated", "models_valid", "models_executed"):
    assert s[k] == sum(p[k] for p in per), f"{k}: {s[k]} != sum over ranks"
assert all(p["models_generated"] > 0 and p["models_executed"] > 0 for p in per), "a rank did nothing"
c = s["cluster"]
assert c["syncs"] >= 3, f"only {c['syncs']} exchanges"
assert c["models_shared"] > 0, "no rank shared a model"
# Every bug a rank stored is in rank 0's bugs/ (its sightings counted there), each signature once.
stored = {p.relative_to(d / "bugs").as_posix() for p in (d / "bugs").glob("*/*") if (p / "bug.json").exists()} if (d / "bugs").exists() else set()
sigs = [k.split("/")[1] for k in stored]
assert len(sigs) == len(set(sigs)), "a signature is stored twice"
for r in (1, 2):
    rb = d / "ranks" / str(r) / "bugs"
    for p in (rb.glob("*/*") if rb.exists() else []):
        if (p / "bug.json").exists():
            key = p.relative_to(rb).as_posix()
            assert key in stored, f"rank {r}'s bug {key} is not in bugs/"
            assert json.load(open(d / "bugs" / key / "bug.json"))["count"] >= json.load(open(p / "bug.json"))["count"]
assert s["bugs"]["unique"] == len(stored), f"bugs.unique {s['bugs']['unique']} != {len(stored)} stored"
print(f"{sys.argv[1]}: {s['models_generated']} models, {s['models_executed']} executed, pairs {s['coverage']['layer_pair']['covered']}, "
      f"{c['syncs']} exchanges, {c['models_shared']} shared, {c['models_adopted']} adopted, {len(stored)} bugs")
PY
}
check "$tmp/c"
[[ -f "$tmp/c/report.html" ]] || fail "no report.html in rank 0's directory"
# A model adopted from another rank is in that rank's store (a checkpoint can name it).
python3 - "$tmp/c/stats.json" <<'PY' || fail "no model moved between ranks"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["cluster"]["models_adopted"] > 0, s["cluster"]
PY

# One bug on every rank: from a seed whose Softmax over axis -2 trips a planted fault of memo-fuzz's
# `faulty` backend (selftest's: NaN over any axis but the last), each rank stores it in its own
# directory; rank 0's bugs/ holds it once, with every sighting.
timeout 300 "${mpi[@]}" "$memo" run --mpi --seeds "$data/cluster" --full-size --backends reference,faulty --lanes 1 \
  --sync-seconds 1 --seconds 6 --seed 5 --quiet --out "$tmp/b" >"$tmp/b.log" 2>&1 || { cat "$tmp/b.log"; fail "3-rank campaign over one bug failed"; }
python3 - "$tmp/b" <<'PY' || fail "a bug found on several ranks"
import json, pathlib, sys
d = pathlib.Path(sys.argv[1])
keys = sorted(p.relative_to(d / "bugs").as_posix() for p in (d / "bugs").glob("*/*"))
assert any(k.startswith("nan/Softmax-") for k in keys), f"rank 0 stored {keys}"
everywhere = []
for k in keys:
    ranks = [r for r in (1, 2) if (d / "ranks" / str(r) / "bugs" / k / "bug.json").exists()]
    if k.startswith("nan/Softmax-") and ranks == [1, 2]:
        everywhere.append(k)  # the seed's own (each rank runs its seeds first); mutants may add others
    bug = json.load(open(d / "bugs" / k / "bug.json"))
    theirs = sum(json.load(open(d / "ranks" / str(r) / "bugs" / k / "bug.json"))["count"] for r in ranks)
    # Rank 0 counts the sightings of all three (its own, when it found the bug first itself).
    assert bug["count"] >= theirs + ("rank" not in bug), f"{k}: rank 0 counts {bug['count']} sightings, ranks 1 and 2 alone {theirs}"
assert everywhere, f"no Softmax bug found on ranks 1 and 2 besides 0: {keys}"
s = json.load(open(d / "stats.json"))
assert s["bugs"]["unique"] == len(keys), (s["bugs"], keys)
print(f"one bug on 3 ranks: stored once as {everywhere}; all: {keys}")
PY
check "$tmp/b"

# Killed: SIGKILL to one rank takes the job down; --resume continues every rank from its store.
"${mpi[@]}" "$memo" "${common[@]}" --seconds 300 --seed 6 --out "$tmp/k" >"$tmp/k.log" 2>&1 &
launcher=$!
for _ in $(seq 100); do
  [[ -f "$tmp/k/ranks/2/store.db" && -f "$tmp/k/store.db" ]] && break
  sleep 0.1
done
sleep 4
victim=$(pgrep -f "memo-fuzz run --mpi" | while read -r p; do [[ $(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null) == *"--seed 6"* && $p != "$launcher" ]] && ps -o pid=,ppid= -p "$p"; done | awk -v l="$launcher" '$2 == l {print $1}' | tail -1)
[[ -n "$victim" ]] || fail "no rank of the job to kill"
kill -9 "$victim"
if timeout 60 bash -c "wait $launcher" 2>/dev/null; then :; fi
for _ in $(seq 100); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.2; done
kill -0 "$launcher" 2>/dev/null && fail "the job went on after a rank died"
timeout 300 "${mpi[@]}" "$memo" run --mpi --resume "$tmp/k" --seconds 6 --quiet >"$tmp/kr.log" 2>&1 || { cat "$tmp/kr.log"; fail "resume after a rank died failed"; }
check "$tmp/k" killed

# Clear errors: a job's campaign resumed without MPI or over another number of ranks.
if "$memo" run --resume "$tmp/c" --seconds 1 >"$tmp/e1" 2>&1; then fail "resumed a 3-rank campaign in one process"; fi
grep -q "mpirun -np 3" "$tmp/e1" || { cat "$tmp/e1"; fail "no clear error for a 3-rank campaign resumed alone"; }
if timeout 120 mpirun --oversubscribe -np 2 "$memo" run --mpi --resume "$tmp/c" --seconds 1 >"$tmp/e2" 2>&1; then fail "resumed 3 ranks over 2"; fi
grep -q "over 3 ranks cannot resume over 2" "$tmp/e2" || { cat "$tmp/e2"; fail "no clear error for another number of ranks"; }
if "$memo" run --share 2 --out "$tmp/x" >"$tmp/e3" 2>&1; then fail "--share without --mpi"; fi
grep -q "options of --mpi" "$tmp/e3" || fail "no clear error for --share without --mpi"
echo "mpi: ok"
