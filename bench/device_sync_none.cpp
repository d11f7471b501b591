#include "bench/device_sync.h"

void kd_bench::synchronize() {}
