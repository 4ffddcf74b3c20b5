#include "workload/tpcc/generate.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <stdexcept>

#include "workload/tpcc/constants.h"

namespace pgslow::workload::tpcc {
namespace {

void field(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
  out += '\t';
}

void field(std::string& out, std::string_view s) {
  out += s;
  out += '\t';
}

void null_field(std::string& out) {
  out += "\\N\t";
}

// A random decimal within [lo, hi] at `scale` digits: W_TAX is "random within [0.0000 ..
// 0.2000]", i.e. field_decimal(rng, 0, 2000, 4).
void field_decimal(Rng& rng, std::string& out, std::int64_t lo, std::int64_t hi, int scale) {
  std::int64_t v = rng.uniform(lo, hi);
  std::int64_t unit = 1;
  for (int i = 0; i < scale; ++i) unit *= 10;
  out += std::to_string(v / unit);
  out += '.';
  std::string frac = std::to_string(v % unit);
  out.append(static_cast<std::size_t>(scale) - frac.size(), '0');
  out += frac;
  out += '\t';
}

void field_a(Rng& rng, std::string& out, int min_len, int max_len) {
  append_a_string(rng, out, min_len, max_len);
  out += '\t';
}

// Street 1, street 2, city, state, zip (4.3.3.1 for WAREHOUSE, DISTRICT and CUSTOMER).
void fields_address(Rng& rng, std::string& out) {
  field_a(rng, out, 10, 20);
  field_a(rng, out, 10, 20);
  field_a(rng, out, 10, 20);
  field_a(rng, out, 2, 2);
  append_zip(rng, out);
  out += '\t';
}

// Each (table, warehouse, district) has its own stream; ORDERS and ORDER-LINE share the
// stream of O_OL_CNT so that both agree on how many lines each order has.
Rng stream(Table table, int w_id, int d_id, int salt = 0) {
  return Rng(0x5eed'0000'0000ULL ^ (static_cast<std::uint64_t>(table) << 40) ^
             (static_cast<std::uint64_t>(w_id) << 16) ^ (static_cast<std::uint64_t>(d_id) << 8) ^
             static_cast<std::uint64_t>(salt));
}

void generate_items(RowBuffer& out) {
  Rng rng = stream(Table::kItem, 0, 0);
  std::string& t = out.text;
  for (int i_id = 1; i_id <= kItems; ++i_id) {
    field(t, i_id);
    field(t, rng.uniform(1, 10'000));       // I_IM_ID
    field_a(rng, t, 14, 24);                // I_NAME
    field_decimal(rng, t, 100, 10'000, 2);  // I_PRICE within [1.00 .. 100.00]
    append_item_data(rng, t);
    out.end_row();
  }
}

void generate_warehouse(int w_id, RowBuffer& out) {
  Rng rng = stream(Table::kWarehouse, w_id, 0);
  std::string& t = out.text;
  field(t, w_id);
  field_a(rng, t, 6, 10);  // W_NAME
  fields_address(rng, t);
  field_decimal(rng, t, 0, 2000, 4);  // W_TAX
  t += "300000.00";                   // W_YTD
  out.end_row();
}

void generate_districts(int w_id, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    Rng rng = stream(Table::kDistrict, w_id, d_id);
    field(t, w_id);
    field(t, d_id);
    field_a(rng, t, 6, 10);  // D_NAME
    fields_address(rng, t);
    field_decimal(rng, t, 0, 2000, 4);            // D_TAX
    field(t, "30000.00");                         // D_YTD
    t += std::to_string(kOrdersPerDistrict + 1);  // D_NEXT_O_ID
    out.end_row();
  }
}

void generate_stock(int w_id, RowBuffer& out) {
  Rng rng = stream(Table::kStock, w_id, 0);
  std::string& t = out.text;
  for (int i_id = 1; i_id <= kStockPerWarehouse; ++i_id) {
    field(t, w_id);
    field(t, i_id);
    field(t, rng.uniform(10, 100));                                            // S_QUANTITY
    for (int d = 0; d < kDistrictsPerWarehouse; ++d) field_a(rng, t, 24, 24);  // S_DIST_xx
    t += "0\t0\t0\t";  // S_YTD, S_ORDER_CNT, S_REMOTE_CNT
    append_item_data(rng, t);
    out.end_row();
  }
}

void generate_customers(int w_id, const LoadContext& ctx, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    Rng rng = stream(Table::kCustomer, w_id, d_id);
    for (int c_id = 1; c_id <= kCustomersPerDistrict; ++c_id) {
      field(t, w_id);
      field(t, d_id);
      field(t, c_id);
      field_a(rng, t, 8, 16);  // C_FIRST
      field(t, "OE");          // C_MIDDLE
      // C_LAST: the first 1,000 customers take each name once, the rest NURand(255, 0, 999).
      append_last_name(t, c_id <= kLastNames
                              ? c_id - 1
                              : static_cast<int>(nurand(rng, 255, 0, 999, ctx.constants.c_last)));
      t += '\t';
      fields_address(rng, t);
      append_n_string(rng, t, 16, 16);  // C_PHONE
      t += '\t';
      field(t, ctx.now);                        // C_SINCE
      field(t, rng.percent(10) ? "BC" : "GC");  // C_CREDIT: 10% bad credit
      field(t, "50000.00");                     // C_CREDIT_LIM
      field_decimal(rng, t, 0, 5000, 4);        // C_DISCOUNT
      field(t, "-10.00");                       // C_BALANCE
      field(t, "10.00");                        // C_YTD_PAYMENT
      field(t, 1);                              // C_PAYMENT_CNT
      field(t, 0);                              // C_DELIVERY_CNT
      append_a_string(rng, t, 300, 500);        // C_DATA
      out.end_row();
    }
  }
}

void generate_history(int w_id, const LoadContext& ctx, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    Rng rng = stream(Table::kHistory, w_id, d_id);
    for (int c_id = 1; c_id <= kCustomersPerDistrict; ++c_id) {
      field(t, c_id);
      field(t, d_id);
      field(t, w_id);
      field(t, d_id);
      field(t, w_id);
      field(t, ctx.now);
      field(t, "10.00");
      append_a_string(rng, t, 12, 24);  // H_DATA
      out.end_row();
    }
  }
}

// O_OL_CNT of every order of a district, shared by ORDERS and ORDER-LINE.
std::vector<int> order_line_counts(int w_id, int d_id) {
  Rng rng = stream(Table::kOrders, w_id, d_id, 1);
  std::vector<int> counts(kOrdersPerDistrict + 1);
  for (int o_id = 1; o_id <= kOrdersPerDistrict; ++o_id)
    counts[static_cast<std::size_t>(o_id)] =
        static_cast<int>(rng.uniform(kMinOrderLines, kMaxOrderLines));
  return counts;
}

void generate_orders(int w_id, const LoadContext& ctx, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    Rng rng = stream(Table::kOrders, w_id, d_id);
    const std::vector<int> counts = order_line_counts(w_id, d_id);
    // O_C_ID is a random permutation of [1 .. 3,000].
    std::vector<int> customers(kCustomersPerDistrict);
    std::iota(customers.begin(), customers.end(), 1);
    for (std::size_t i = customers.size() - 1; i > 0; --i)
      std::swap(customers[i],
                customers[static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(i)))]);
    for (int o_id = 1; o_id <= kOrdersPerDistrict; ++o_id) {
      field(t, w_id);
      field(t, d_id);
      field(t, o_id);
      field(t, customers[static_cast<std::size_t>(o_id - 1)]);
      field(t, ctx.now);
      if (o_id < kFirstUndeliveredOrder)
        field(t, rng.uniform(1, 10));  // O_CARRIER_ID
      else
        null_field(t);
      field(t, counts[static_cast<std::size_t>(o_id)]);
      t += '1';  // O_ALL_LOCAL
      out.end_row();
    }
  }
}

void generate_new_orders(int w_id, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    for (int o_id = kFirstUndeliveredOrder; o_id <= kOrdersPerDistrict; ++o_id) {
      field(t, w_id);
      field(t, d_id);
      t += std::to_string(o_id);
      out.end_row();
    }
  }
}

void generate_order_lines(int w_id, const LoadContext& ctx, RowBuffer& out) {
  std::string& t = out.text;
  for (int d_id = 1; d_id <= kDistrictsPerWarehouse; ++d_id) {
    Rng rng = stream(Table::kOrderLine, w_id, d_id);
    const std::vector<int> counts = order_line_counts(w_id, d_id);
    for (int o_id = 1; o_id <= kOrdersPerDistrict; ++o_id) {
      const bool delivered = o_id < kFirstUndeliveredOrder;
      for (int number = 1; number <= counts[static_cast<std::size_t>(o_id)]; ++number) {
        field(t, w_id);
        field(t, d_id);
        field(t, o_id);
        field(t, number);
        field(t, rng.uniform(1, kItems));  // OL_I_ID
        field(t, w_id);                    // OL_SUPPLY_W_ID
        if (delivered)
          field(t, ctx.now);  // OL_DELIVERY_D
        else
          null_field(t);
        field(t, 5);  // OL_QUANTITY
        if (delivered)
          field(t, "0.00");
        else
          field_decimal(rng, t, 1, 999'999, 2);  // OL_AMOUNT within [0.01 .. 9,999.99]
        append_a_string(rng, t, 24, 24);         // OL_DIST_INFO
        out.end_row();
      }
    }
  }
}

}  // namespace

const std::vector<TableInfo>& table_infos() {
  static const std::vector<TableInfo> infos = {
      {Table::kItem, "item", "i_id, i_im_id, i_name, i_price, i_data", false},
      {Table::kWarehouse, "warehouse",
       "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd", true},
      {Table::kDistrict, "district",
       "d_w_id, d_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, "
       "d_next_o_id",
       true},
      {Table::kStock, "stock",
       "s_w_id, s_i_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, "
       "s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, "
       "s_remote_cnt, s_data",
       true},
      {Table::kCustomer, "customer",
       "c_w_id, c_d_id, c_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, "
       "c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, "
       "c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data",
       true},
      {Table::kHistory, "history",
       "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data", true},
      {Table::kOrders, "orders",
       "o_w_id, o_d_id, o_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local", true},
      {Table::kNewOrder, "new_order", "no_w_id, no_d_id, no_o_id", true},
      {Table::kOrderLine, "order_line",
       "ol_w_id, ol_d_id, ol_o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "
       "ol_quantity, ol_amount, ol_dist_info",
       true},
  };
  return infos;
}

const TableInfo& table_info(Table table) {
  for (const auto& info : table_infos())
    if (info.table == table) return info;
  throw std::logic_error("unknown TPC-C table");
}

std::int64_t expected_rows(Table table, int warehouses) {
  const std::int64_t w = warehouses;
  const std::int64_t districts = w * kDistrictsPerWarehouse;
  switch (table) {
    case Table::kItem:
      return kItems;
    case Table::kWarehouse:
      return w;
    case Table::kDistrict:
      return districts;
    case Table::kStock:
      return w * kStockPerWarehouse;
    case Table::kCustomer:
    case Table::kHistory:
      return districts * kCustomersPerDistrict;
    case Table::kOrders:
      return districts * kOrdersPerDistrict;
    case Table::kNewOrder:
      return districts * kNewOrdersPerDistrict;
    case Table::kOrderLine:
      return -1;
  }
  return -1;
}

void RowBuffer::end_row() {
  text += '\n';
  ++rows_;
  if (text.size() >= limit_) {
    flush_(text);
    text.clear();
  }
}

void RowBuffer::finish() {
  if (!text.empty()) flush_(text);
  text.clear();
}

void generate_rows(Table table, int w_id, const LoadContext& ctx, RowBuffer& out) {
  switch (table) {
    case Table::kItem:
      return generate_items(out);
    case Table::kWarehouse:
      return generate_warehouse(w_id, out);
    case Table::kDistrict:
      return generate_districts(w_id, out);
    case Table::kStock:
      return generate_stock(w_id, out);
    case Table::kCustomer:
      return generate_customers(w_id, ctx, out);
    case Table::kHistory:
      return generate_history(w_id, ctx, out);
    case Table::kOrders:
      return generate_orders(w_id, ctx, out);
    case Table::kNewOrder:
      return generate_new_orders(w_id, out);
    case Table::kOrderLine:
      return generate_order_lines(w_id, ctx, out);
  }
}

}  // namespace pgslow::workload::tpcc
