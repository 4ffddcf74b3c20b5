#include "workload/tpcc/checks.h"

#include <string>

namespace pgslow::workload::tpcc {

// Each query lists at most five offenders with the total count in every row; an empty result
// means the condition holds. Condition 3.3.2.11 holds only right after the initial load: it is
// load_check(), which the loader runs.
const std::vector<Check>& checks() {
  static const std::vector<Check> table = {
      {"3.3.2.1", "W_YTD = sum(D_YTD)",
       R"(SELECT count(*) OVER (), format('warehouse %s: W_YTD %s, sum(D_YTD) %s', w_id, w_ytd, d.ytd)
FROM warehouse LEFT JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d
  ON d.d_w_id = w_id
WHERE w_ytd IS DISTINCT FROM d.ytd ORDER BY w_id LIMIT 5)"},
      // Districts whose NEW-ORDER rows were all delivered have no max(NO_O_ID) to compare.
      {"3.3.2.2", "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s: D_NEXT_O_ID - 1 = %s, max(O_ID) = %s, max(NO_O_ID) = %s',
         d_w_id, d_id, d_next_o_id - 1, o.max_o_id, n.max_no_o_id)
FROM district
LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) AS max_o_id FROM orders GROUP BY 1, 2) o
  ON o.o_w_id = d_w_id AND o.o_d_id = d_id
LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) AS max_no_o_id FROM new_order GROUP BY 1, 2) n
  ON n.no_w_id = d_w_id AND n.no_d_id = d_id
WHERE d_next_o_id - 1 IS DISTINCT FROM o.max_o_id
   OR (n.max_no_o_id IS NOT NULL AND n.max_no_o_id <> o.max_o_id)
ORDER BY d_w_id, d_id LIMIT 5)"},
      {"3.3.2.3", "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER) per district",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s: max(NO_O_ID) - min(NO_O_ID) + 1 = %s, rows %s',
         no_w_id, no_d_id, span, n)
FROM (SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS n
      FROM new_order GROUP BY 1, 2) x
WHERE span <> n ORDER BY no_w_id, no_d_id LIMIT 5)"},
      {"3.3.2.4", "sum(O_OL_CNT) = count(ORDER-LINE) per district",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s: sum(O_OL_CNT) = %s, order lines %s', o_w_id, o_d_id, o.n, l.n)
FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS n FROM orders GROUP BY 1, 2) o
FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) AS n FROM order_line GROUP BY 1, 2) l
  ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
WHERE o.n IS DISTINCT FROM l.n ORDER BY 1, 2 LIMIT 5)"},
      // Both directions: an order whose carrier and NEW-ORDER row disagree, and a NEW-ORDER
      // row without its order.
      {"3.3.2.5", "O_CARRIER_ID is null exactly when the order has a NEW-ORDER row",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s order %s: O_CARRIER_ID %s, in NEW-ORDER %s, in ORDER %s',
         coalesce(o_w_id, no_w_id), coalesce(o_d_id, no_d_id), coalesce(o_id, no_o_id),
         coalesce(o_carrier_id::text, 'null'), no_o_id IS NOT NULL, o_id IS NOT NULL)
FROM orders FULL JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
WHERE o_id IS NULL OR (o_carrier_id IS NULL) <> (no_o_id IS NOT NULL)
ORDER BY 2 LIMIT 5)"},
      // Both directions: an order whose O_OL_CNT differs from its lines, and lines without
      // their order.
      {"3.3.2.6", "O_OL_CNT = count(ORDER-LINE) per order",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s order %s: O_OL_CNT %s, order lines %s',
         coalesce(o_w_id, l.ol_w_id), coalesce(o_d_id, l.ol_d_id), coalesce(o_id, l.ol_o_id),
         coalesce(o_ol_cnt::text, 'no order'), coalesce(l.n, 0))
FROM orders FULL JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, count(*) AS n FROM order_line
                       GROUP BY 1, 2, 3) l
  ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id
WHERE o_ol_cnt IS DISTINCT FROM coalesce(l.n, 0) ORDER BY 2 LIMIT 5)"},
      {"3.3.2.7", "OL_DELIVERY_D is null exactly when O_CARRIER_ID is null",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s order %s line %s: OL_DELIVERY_D %s, O_CARRIER_ID %s',
         ol_w_id, ol_d_id, ol_o_id, ol_number, coalesce(ol_delivery_d::text, 'null'),
         coalesce(o_carrier_id::text, 'null'))
FROM order_line JOIN orders ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id
WHERE (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)
ORDER BY ol_w_id, ol_d_id, ol_o_id, ol_number LIMIT 5)"},
      {"3.3.2.8", "W_YTD = sum(H_AMOUNT) per warehouse",
       R"(SELECT count(*) OVER (), format('warehouse %s: W_YTD %s, sum(H_AMOUNT) %s', w_id, w_ytd, h.amount)
FROM warehouse LEFT JOIN (SELECT h_w_id, sum(h_amount) AS amount FROM history GROUP BY 1) h
  ON h.h_w_id = w_id
WHERE w_ytd IS DISTINCT FROM h.amount ORDER BY w_id LIMIT 5)"},
      {"3.3.2.9", "D_YTD = sum(H_AMOUNT) per district",
       R"(SELECT count(*) OVER (),
  format('warehouse %s district %s: D_YTD %s, sum(H_AMOUNT) %s', d_w_id, d_id, d_ytd, h.amount)
FROM district LEFT JOIN (SELECT h_w_id, h_d_id, sum(h_amount) AS amount FROM history
                         GROUP BY 1, 2) h
  ON h.h_w_id = d_w_id AND h.h_d_id = d_id
WHERE d_ytd IS DISTINCT FROM h.amount ORDER BY d_w_id, d_id LIMIT 5)"},
      {"3.3.2.10", "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer",
       R"(WITH delivered AS (
  SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) AS amount
  FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3),
paid AS (SELECT h_c_w_id, h_c_d_id, h_c_id, sum(h_amount) AS amount FROM history GROUP BY 1, 2, 3)
SELECT count(*) OVER (),
  format('warehouse %s district %s customer %s: C_BALANCE %s, delivered %s - paid %s',
         c_w_id, c_d_id, c_id, c_balance, coalesce(d.amount, 0), coalesce(p.amount, 0))
FROM customer
LEFT JOIN delivered d ON d.o_w_id = c_w_id AND d.o_d_id = c_d_id AND d.o_c_id = c_id
LEFT JOIN paid p ON p.h_c_w_id = c_w_id AND p.h_c_d_id = c_d_id AND p.h_c_id = c_id
WHERE c_balance <> coalesce(d.amount, 0) - coalesce(p.amount, 0)
ORDER BY c_w_id, c_d_id, c_id LIMIT 5)"},
      {"3.3.2.12", "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer",
       R"(WITH delivered AS (
  SELECT o_w_id, o_d_id, o_c_id, sum(ol_amount) AS amount
  FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
  WHERE ol_delivery_d IS NOT NULL GROUP BY 1, 2, 3)
SELECT count(*) OVER (),
  format('warehouse %s district %s customer %s: C_BALANCE + C_YTD_PAYMENT %s, delivered %s',
         c_w_id, c_d_id, c_id, c_balance + c_ytd_payment, coalesce(d.amount, 0))
FROM customer
LEFT JOIN delivered d ON d.o_w_id = c_w_id AND d.o_d_id = c_d_id AND d.o_c_id = c_id
WHERE c_balance + c_ytd_payment <> coalesce(d.amount, 0)
ORDER BY c_w_id, c_d_id, c_id LIMIT 5)"},
  };
  return table;
}

const Check& load_check() {
  static const Check check = {"3.3.2.11",
                              "count(ORDER) - count(NEW-ORDER) = 2,100 per district after the load",
                              R"(SELECT count(*) OVER (),
  format('warehouse %s district %s: count(ORDER) - count(NEW-ORDER) = %s',
         d_w_id, d_id, coalesce(o.n, 0) - coalesce(n.n, 0))
FROM district
LEFT JOIN (SELECT o_w_id, o_d_id, count(*) AS n FROM orders GROUP BY 1, 2) o
  ON o.o_w_id = d_w_id AND o.o_d_id = d_id
LEFT JOIN (SELECT no_w_id, no_d_id, count(*) AS n FROM new_order GROUP BY 1, 2) n
  ON n.no_w_id = d_w_id AND n.no_d_id = d_id
WHERE coalesce(o.n, 0) - coalesce(n.n, 0) <> 2100 ORDER BY d_w_id, d_id LIMIT 5)"};
  return check;
}

namespace {

CheckResult run_check(pg::Connection& conn, const Check& check) {
  CheckResult r;
  r.clause = check.clause;
  r.description = check.description;
  const pg::Result offenders = conn.exec(check.sql);
  r.passed = offenders.rows() == 0;
  if (!r.passed) {
    r.detail = std::to_string(offenders.get_int64(0, 0)) + " offending: ";
    for (int i = 0; i < offenders.rows(); ++i) {
      if (i > 0) r.detail += "; ";
      r.detail += offenders.get(i, 1);
    }
  }
  return r;
}

}  // namespace

std::vector<CheckResult> run_checks(pg::Connection& conn) {
  std::vector<CheckResult> results;
  // One snapshot for every check, so they see the same database.
  pg::in_transaction(
      conn,
      [&] {
        for (const auto& check : checks()) results.push_back(run_check(conn, check));
      },
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  return results;
}

CheckResult run_load_check(pg::Connection& conn) {
  return run_check(conn, load_check());
}

}  // namespace pgslow::workload::tpcc
