-- pgbench's built-in select-only transaction (pgbench -S) as a script file.
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
