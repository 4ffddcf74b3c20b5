#pragma once
// The five transactions (clause 2), one header and one file each (new_order.h, ...: inputs,
// draw, statements and their parameter structs, coroutine), with the isolation level and the
// terminal they share.

#include "workload/tpcc/delivery.h"
#include "workload/tpcc/isolation.h"
#include "workload/tpcc/new_order.h"
#include "workload/tpcc/order_status.h"
#include "workload/tpcc/payment.h"
#include "workload/tpcc/random.h"
#include "workload/tpcc/stock_level.h"
#include "workload/tpcc/terminal.h"
#include "workload/workload.h"
