-- A sort that needs memory: 10,000 consecutive accounts from a random start, ordered by
-- balance and filler (about 1.5 MB of rows to sort), keeping the last ten. With work_mem above
-- what the sort needs it is a quicksort in memory; below it the sort spills to temporary files
-- (an external merge), and the smaller work_mem, the more passes. `pgslow cliff work_mem`
-- measures where that starts to cost. Runs as is with pgbench -f on `pgbench -i` tables.
\set from random(1, 100000 * :scale - 9999)
SELECT aid, abalance FROM pgbench_accounts
  WHERE aid BETWEEN :from AND :from + 9999
  ORDER BY abalance, filler OFFSET 9990;
