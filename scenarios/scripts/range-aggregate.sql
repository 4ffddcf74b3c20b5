-- The pool lesson's heavy query as a pgbench script (pgslow's range-aggregate workload):
-- count, sum and avg over 10,000 consecutive accounts from a random start, so the server's
-- CPU, not the round trip, is the bottleneck. Runs as is with pgbench -f on `pgbench -i` tables.
\set from random(1, 100000 * :scale - 9999)
\set to :from + 9999
SELECT count(*), sum(abalance), avg(abalance) FROM pgbench_accounts
  WHERE aid BETWEEN :from AND :to;
