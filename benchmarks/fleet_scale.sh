#!/bin/sh
# Issue 12's figures at 1,000 / 10,000 / 50,000 agents, one benchmark after another (never
# two at once: they would share the cores), each line with the load it ran under.
# About 1.5 hours on main (2fed606), mostly the filter at 10,000 rows and the 50,000 fleets.
#
#     sh benchmarks/fleet_scale.sh [LOG]        (LOG: default fleet-scale-YYYYmmdd-HHMM.log)
#
# SIZES="1000 10000" sh benchmarks/fleet_scale.sh   runs fewer sizes.
set -u
here=$(dirname "$0")
python=${PYTHON:-python3}
sizes=${SIZES:-1000 10000 50000}
log=${1:-fleet-scale-$(date +%Y%m%d-%H%M).log}

run() {
    echo "\$ $*  [$(uptime | sed 's/.*load/load/')]" | tee -a "$log"
    "$python" "$@" 2>&1 | tee -a "$log"
}

echo "# $(git -C "$here" rev-parse --short HEAD 2>/dev/null) $(date -u +%FT%TZ) $(nproc) cores" | tee -a "$log"
for n in $sizes; do run "$here/idle_cpu.py" "$n"; done
run "$here/idle_cpu.py" 10000 --fleet crashed --monitor on
run "$here/idle_cpu.py" 10000 --fleet sessions --monitor on
for n in $sizes; do run "$here/churn.py" "$n"; done
for n in $sizes; do run "$here/cold_start.py" "$n" --runs 3; done
for n in $sizes; do
    # The filter is O(rows^2) on main: minutes at 10,000 rows, hours at 50,000.
    if [ "$n" -le 1000 ]; then
        run "$here/key_latency.py" "$n" --rounds 15
    else
        run "$here/key_latency.py" "$n" --rounds 10 --no-filter
    fi
done
run "$here/key_latency.py" 10000 --rounds 2 --monitor off --timeout 600
run "$here/agents_json.py" 1000 10000 50000 100000 --runs 3
for n in $sizes; do run "$here/operations.py" "$n" --repeat 3; done
echo "# done $(date -u +%FT%TZ)" | tee -a "$log"
