// New-Order (clause 2.4): enters a complete order in one transaction. The mid-weight
// read-write transaction, 10 of the deck's 23 cards (43.5%) and the one tpmC counts. It serialises
// on the district row (D_NEXT_O_ID) and locks up to 15 stock rows, so it stresses row locking,
// index inserts into the growing ORDERS / NEW-ORDER / ORDER-LINE tables and WAL.

#include "workload/tpcc/new_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {

pg::Params NoGetCustomer::params() const {
  return {param(w_id), param(d_id), param(c_id)};
}
pg::Params NoUpdateDistrict::params() const {
  return {param(w_id), param(d_id)};
}
pg::Params NoInsertOrder::params() const {
  return {param(w_id), param(d_id), param(o_id), param(c_id), param(ol_cnt), param(all_local)};
}
pg::Params NoInsertNewOrder::params() const {
  return {param(w_id), param(d_id), param(o_id)};
}
pg::Params NoGetItems::params() const {
  return {int_array(item_ids)};
}
pg::Params NoUpdateStock::params() const {
  return {param(supply_w_id), param(i_id), param(quantity), param(remote), param(d_id)};
}
pg::Params NoInsertOrderLines::params() const {
  return {param(w_id),           param(d_id),
          param(o_id),           int_array(numbers),
          int_array(item_ids),   int_array(supply_w_ids),
          int_array(quantities), cents_array(amounts_cents),
          text_array(dist_infos)};
}

std::vector<StatementDef> new_order_statements() {
  return {
      // 2.4.2.2: the customer's discount, last name and credit, and the warehouse's tax. An
      // outer join, so a missing row is named: no row, no warehouse; c_id NULL, no customer.
      {"no_get_customer",
       "SELECT c_discount, c_last, c_credit, w_tax, c_id FROM warehouse LEFT JOIN customer "
       "ON c_w_id = w_id AND c_d_id = $2 AND c_id = $3 WHERE w_id = $1"},
      // 2.4.2.2: D_NEXT_O_ID is read and incremented; the row lock orders concurrent
      // New-Orders of one district.
      {"no_update_district",
       "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = $1 AND d_id = $2 "
       "RETURNING d_tax, d_next_o_id - 1"},
      {"no_insert_order",
       "INSERT INTO orders (o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, "
       "o_all_local) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP, NULL, $5, $6)"},
      {"no_insert_new_order",
       "INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES ($1, $2, $3)"},
      {"no_get_items",
       "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id = ANY($1::int[])"},
      // 2.4.2.2: S_QUANTITY drops by OL_QUANTITY when 10 or more would remain, otherwise it is
      // restocked by 91. One statement locks, updates and returns the row.
      {"no_update_stock",
       "UPDATE stock SET s_quantity = CASE WHEN s_quantity >= $3 + 10 THEN s_quantity - $3 "
       "ELSE s_quantity - $3 + 91 END, s_ytd = s_ytd + $3, s_order_cnt = s_order_cnt + 1, "
       "s_remote_cnt = s_remote_cnt + $4 WHERE s_w_id = $1 AND s_i_id = $2 "
       "RETURNING s_quantity, s_data, CASE $5::int WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 "
       "WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 "
       "WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END"},
      // One round trip for all the lines, as a batched insert in BenchBase.
      {"no_insert_order_lines",
       "INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, "
       "ol_quantity, ol_amount, ol_dist_info) SELECT $1, $2, $3, unnest($4::int[]), "
       "unnest($5::int[]), unnest($6::int[]), unnest($7::int[]), unnest($8::numeric[]), "
       "unnest($9::text[])"},
  };
}

NewOrderInput draw_new_order(Rng& rng, const Terminal& t) {
  NewOrderInput in;
  in.w_id = t.w_id;
  in.d_id = rng.uniform(1, kDistrictsPerWarehouse);  // 2.4.1.2
  in.c_id = nurand(rng, 1023, 1, kCustomersPerDistrict, t.constants.c_id);
  const auto ol_cnt = rng.uniform(kMinOrderLines, kMaxOrderLines);  // 2.4.1.3
  in.rollback = rng.percent(1);                                     // 2.4.1.4
  std::vector<std::int64_t> seen;
  // The rolled-back order draws one valid line less: its last item is the unused one.
  const std::int64_t valid_lines = in.rollback ? ol_cnt - 1 : ol_cnt;
  for (std::int64_t n = 0; n < valid_lines; ++n) {
    NewOrderLine line;
    // 2.4.1.5: item ids by NURand; distinct within an order, as most drivers draw them.
    do {
      line.i_id = nurand(rng, 8191, 1, kItems, t.constants.ol_i_id);
    } while (std::find(seen.begin(), seen.end(), line.i_id) != seen.end());
    seen.push_back(line.i_id);
    // 2.4.1.5: 1% of lines are supplied by another warehouse, when there is one.
    line.supply_w_id = t.w_id;
    if (t.warehouses > 1 && rng.percent(1)) {
      do {
        line.supply_w_id = rng.uniform(1, t.warehouses);
      } while (line.supply_w_id == t.w_id);
    }
    line.quantity = rng.uniform(1, 10);
    in.lines.push_back(line);
  }
  // Stock rows are locked in one global order, so concurrent New-Orders cannot deadlock.
  std::sort(in.lines.begin(), in.lines.end(), [](const NewOrderLine& a, const NewOrderLine& b) {
    return std::tie(a.supply_w_id, a.i_id) < std::tie(b.supply_w_id, b.i_id);
  });
  // 2.4.1.4: the rolled-back order's last item is an unused id, processed after the valid ones.
  if (in.rollback)
    in.lines.push_back({.i_id = kItems + 1, .supply_w_id = t.w_id, .quantity = rng.uniform(1, 10)});
  return in;
}

namespace {
std::string where(const NewOrderInput& in) {
  return fmt::format("New-Order (warehouse {}, district {})", in.w_id, in.d_id);
}
}  // namespace

Task<TxStatus> run_new_order(Session& s, const NewOrderInput& in, const std::string& begin) {
  co_await s.query(begin);
  const pg::Result customer = co_await s.execute(
      "no_get_customer", NoGetCustomer{.w_id = in.w_id, .d_id = in.d_id, .c_id = in.c_id}.params());
  if (customer.rows() == 0 || customer.is_null(0, 4)) {
    const std::string message = missing_row(
        where(in), customer.rows() == 0
                       ? fmt::format("WAREHOUSE row (warehouse {})", in.w_id)
                       : fmt::format("CUSTOMER row (warehouse {}, district {}, customer {})",
                                     in.w_id, in.d_id, in.c_id));
    co_await abandon(s, message);
  }
  const pg::Result district = co_await s.execute(
      "no_update_district", NoUpdateDistrict{.w_id = in.w_id, .d_id = in.d_id}.params());
  if (district.rows() == 0) {
    const std::string message = missing_row(
        where(in), fmt::format("DISTRICT row (warehouse {}, district {})", in.w_id, in.d_id));
    co_await abandon(s, message);
  }
  const std::int64_t o_id = district.get_int64(0, 1);

  bool all_local = true;
  std::vector<std::int64_t> item_ids;
  for (const auto& line : in.lines) {
    item_ids.push_back(line.i_id);
    all_local = all_local && line.supply_w_id == in.w_id;
  }
  const auto ol_cnt = static_cast<std::int64_t>(in.lines.size());
  co_await s.execute("no_insert_order", NoInsertOrder{.w_id = in.w_id,
                                                      .d_id = in.d_id,
                                                      .o_id = o_id,
                                                      .c_id = in.c_id,
                                                      .ol_cnt = ol_cnt,
                                                      .all_local = all_local}
                                            .params());
  co_await s.execute("no_insert_new_order",
                     NoInsertNewOrder{.w_id = in.w_id, .d_id = in.d_id, .o_id = o_id}.params());

  // Named, not a temporary inside co_await: GCC 12 destroys such temporaries twice.
  const NoGetItems get_items{.item_ids = std::move(item_ids)};
  const pg::Result items = co_await s.execute("no_get_items", get_items.params());
  std::unordered_map<std::int64_t, std::int64_t> price_cents;
  for (int r = 0; r < items.rows(); ++r)
    price_cents[items.get_int64(r, 0)] = parse_cents(items.get(r, 1));

  NoInsertOrderLines lines;
  lines.w_id = in.w_id;
  lines.d_id = in.d_id;
  lines.o_id = o_id;
  std::int64_t number = 0;
  for (const auto& line : in.lines) {
    // 2.4.2.3: the items are processed in order; the unused one, the order's last, is "not
    // found" after the valid items were read, their stock updated and their lines inserted
    // (one batched insert, as for a committed order), and the whole order rolls back.
    const auto price = price_cents.find(line.i_id);
    const bool designed = in.rollback && &line == &in.lines.back() && line.i_id == kItems + 1;
    // Only the designed rollback's last item may be missing, and it must be: anything else is
    // a fault of the data, which must not count in tpmC as a rollback nor as a commit.
    if ((price == price_cents.end()) != designed) {
      const std::string message = fmt::format(
          "New-Order (warehouse {}, district {}): item {} {}: the ITEM table does not hold the "
          "100,000 items of the load; reload the data (pgslow load --workload tpcc-lite --force) "
          "and look for what changed it",
          in.w_id, in.d_id, line.i_id,
          designed ? "exists, but it is the unused item of the designed 1% rollback (2.4.1.4)"
                   : "is not found, and this order is not the designed 1% rollback (2.4.1.4) "
                     "or it is not the order's last item");
      co_await abandon(s, message);
    }
    if (designed) {
      if (!lines.numbers.empty()) co_await s.execute("no_insert_order_lines", lines.params());
      co_await s.query("ROLLBACK");
      co_return TxStatus::kRolledBack;
    }
    const pg::Result stock =
        co_await s.execute("no_update_stock", NoUpdateStock{.supply_w_id = line.supply_w_id,
                                                            .i_id = line.i_id,
                                                            .quantity = line.quantity,
                                                            .d_id = in.d_id,
                                                            .remote = line.supply_w_id != in.w_id}
                                                  .params());
    if (stock.rows() == 0) {
      const std::string message = missing_row(
          where(in), fmt::format("STOCK row (warehouse {}, item {})", line.supply_w_id, line.i_id));
      co_await abandon(s, message);
    }
    lines.numbers.push_back(++number);
    lines.item_ids.push_back(line.i_id);
    lines.supply_w_ids.push_back(line.supply_w_id);
    lines.quantities.push_back(line.quantity);
    lines.amounts_cents.push_back(line.quantity * price->second);  // OL_AMOUNT
    lines.dist_infos.emplace_back(stock.get(0, 2));
  }
  co_await s.execute("no_insert_order_lines", lines.params());
  co_await s.query("COMMIT");
  co_return TxStatus::kCommitted;
}

}  // namespace pgslow::workload::tpcc
