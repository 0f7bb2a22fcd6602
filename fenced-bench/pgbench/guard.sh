#!/usr/bin/env bash
# The guard's check made five ways, against the same transaction without it (BENCHMARKS.md, "The guard: the lock
# is not the cost"): pgbench, three rounds in alternating order, 6 s per variant (GUARD_SECONDS), 1 and 8
# connections; the time per transaction against plain. It makes and drops a scratch database of its own; libpq's
# variables choose the server (default 127.0.0.1:5432, user postgres). About 4 minutes.
set -euo pipefail
cd "$(dirname "$0")"
export PGHOST="${PGHOST:-127.0.0.1}" PGUSER="${PGUSER:-postgres}"
db=fenced_guard_bench
psql -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql -q -d "$db" -c "CREATE TABLE guard (resource text PRIMARY KEY, fence bigint NOT NULL)" \
    -c "INSERT INTO guard VALUES ('m_4471', 34)" -c "CREATE TABLE work (id bigserial PRIMARY KEY, v int)"
variants=(plain share nolock advis ck_one ck_share)
declare -A total
for c in 1 8; do
    for round in 1 2 3; do
        order=("${variants[@]}")
        if (( round % 2 == 0 )); then order=($(printf '%s\n' "${variants[@]}" | tac)); fi
        for v in "${order[@]}"; do
            tps=$(pgbench -n -M prepared -c "$c" -j "$(( c > 1 ? 2 : 1 ))" -T "${GUARD_SECONDS:-6}" -f "guard-$v.sql" "$db" 2>&1 | awk '/^tps/ {print $3}')
            total[$c,$v]=$(echo "${total[$c,$v]:-0} + $tps" | bc -l)
        done
    done
    for v in "${variants[@]}"; do
        printf '%d connection(s)  %-9s %8.0f tx/s  %.3fx\n' "$c" "$v" "$(echo "${total[$c,$v]} / 3" | bc -l)" \
            "$(echo "${total[$c,plain]} / ${total[$c,$v]}" | bc -l)"
    done
done
psql -q -d postgres -c "DROP DATABASE $db"
